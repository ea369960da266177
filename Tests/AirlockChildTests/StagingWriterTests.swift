import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A randomly named directory holding `staging/` (what the writer is given) and
/// `outside/` beside it, with a sentinel file; removed at the end.
final class StagingFixture {
    let scratch: Scratch
    var base: URL { URL(fileURLWithPath: scratch.path) }
    var staging: URL { base.appendingPathComponent("staging") }
    var outside: URL { base.appendingPathComponent("outside") }
    let sentinel = Data("sentinel\n".utf8)

    init() throws {
        scratch = try Scratch("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
        try sentinel.write(to: outside.appendingPathComponent("sentinel"))
    }

    /// The descriptors of `staging/` handed to writers, closed at the end.
    private var roots: [FileDescriptor] = []

    deinit {
        for root in roots { root.close() }
    }

    /// A writer on a descriptor of `staging/` opened now.
    func writer(_ policy: Policy = Policy()) throws -> StagingWriter {
        let root = try FileDescriptor.openDirectory(path: staging.path)
        roots.append(root)
        return StagingWriter(root: root, policy: policy)
    }

    /// `outside/` holds the sentinel, unchanged, and nothing else.
    func expectOutsideUntouched(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: outside.path), ["sentinel"], sourceLocation: sourceLocation)
        try expectEqual(Data(contentsOf: outside.appendingPathComponent("sentinel")), sentinel, sourceLocation: sourceLocation)
    }

    /// This process's descriptors that name something beneath the fixture.
    func openDescriptors() -> Int { descriptorsOpen(beneath: scratch.path).count }

    func mode(_ relative: String) -> mode_t {
        var st = stat()
        guard lstat(staging.appendingPathComponent(relative).path, &st) == 0 else { return 0 }
        return st.st_mode & 0o7777
    }
}

extension EntrySink {
    /// Starts a file whose size is not declared, as most of these tests do.
    mutating func beginFile(_ path: EntryPath) throws(SystemError) { try beginFile(path, size: nil) }
}

func entry(_ name: String) throws -> EntryPath {
    try EntryPath(validating: Array(name.utf8), policy: Policy())
}

/// Writes `content` as the file `name` through `writer`, in chunks of at most 7 bytes.
func writeFile(_ writer: inout StagingWriter, _ name: String, _ content: String) throws {
    try writer.beginFile(try entry(name))
    let bytes = Array(content.utf8)
    for start in stride(from: 0, to: bytes.count, by: 7) {
        try bytes[start..<min(start + 7, bytes.count)].withUnsafeBytes { try writer.write($0) }
    }
    try writer.endFile()
}

/// The error `body` throws, if it throws one.
func systemError(_ body: () throws -> Void) -> SystemError? {
    do {
        try body()
        return nil
    } catch {
        return error as? SystemError
    }
}

@Suite("StagingWriter: entries beneath staging only, from descriptors, never through a link, never over a file")
struct StagingWriterTests {
    @Test("files and directories land with their bytes, private modes (the supervisor sets the outbox's) and counts")
    func writesEntries() throws {
        let fixture = try StagingFixture()
        var writer = try fixture.writer()
        try writer.makeDirectory(try entry("docs/"))
        try writeFile(&writer, "docs/a/b/report.txt", "hello, staging: more than one chunk\n")
        try writeFile(&writer, "top.txt", "")
        writer.close()
        try expectEqual(String(contentsOf: fixture.staging.appendingPathComponent("docs/a/b/report.txt"), encoding: .utf8), "hello, staging: more than one chunk\n")
        try expect(Data(contentsOf: fixture.staging.appendingPathComponent("top.txt")).isEmpty)
        expectEqual(writer.filesWritten, 2)
        expectEqual(writer.directoriesMade, 3, "docs, docs/a and docs/a/b")
        for directory in ["docs", "docs/a", "docs/a/b"] { expectEqual(fixture.mode(directory), 0o700, "\(directory)") }
        expectEqual(fixture.mode("docs/a/b/report.txt"), 0o600)
        expectEqual(fixture.mode("top.txt"), 0o600)
        try fixture.expectOutsideUntouched()
    }

    @Test("files 0600 and directories 0700 whatever the policy's modes, unless other staged modes are asked")
    func privateModes() throws {
        let fixture = try StagingFixture()
        var policy = Policy()
        policy.privateModes = false
        var writer = try fixture.writer(policy)
        try writeFile(&writer, "d/f", "x")
        writer.close()
        expectEqual(fixture.mode("d"), 0o700)
        expectEqual(fixture.mode("d/f"), 0o600)
    }

    @Test("asked for staged modes (the outbox's), files and directories are created with exactly those")
    func stagedModes() throws {
        let fixture = try StagingFixture()
        var policy = Policy()
        policy.stagedFileMode = 0o640
        policy.stagedDirectoryMode = 0o750
        var writer = try fixture.writer(policy)
        try writeFile(&writer, "d/e/f", "x")
        // In a directory the writer made: created by one openat2 from the root.
        try writeFile(&writer, "d/e/h", "y")
        try writer.makeDirectory(try entry("g/"))
        writer.close()
        for directory in ["d", "d/e", "g"] { expectEqual(fixture.mode(directory), 0o750, "\(directory)") }
        expect(fixture.mode("d/e/f") == 0o640 && fixture.mode("d/e/h") == 0o640)
        try expectEqual(String(contentsOf: fixture.staging.appendingPathComponent("d/e/h"), encoding: .utf8), "y")
        try fixture.expectOutsideUntouched()
    }

    @Test("a file already there is refused with EEXIST and keeps its bytes")
    func neverOverwrites() throws {
        let fixture = try StagingFixture()
        try Data("first\n".utf8).write(to: fixture.staging.appendingPathComponent("same.txt"))
        var writer = try fixture.writer()
        let error = systemError { try writer.beginFile(try entry("same.txt")) }
        writer.close()
        expectEqual(error?.errno, .exists)
        try expectEqual(String(contentsOf: fixture.staging.appendingPathComponent("same.txt"), encoding: .utf8), "first\n")
        expectEqual(writer.filesWritten, 0)
    }

    @Test("a link planted at a file's name is refused, and its target is neither written nor truncated")
    func linkAtFileName() throws {
        let fixture = try StagingFixture()
        try FileManager.default.createSymbolicLink(atPath: fixture.staging.appendingPathComponent("evil").path,
                                                   withDestinationPath: fixture.outside.appendingPathComponent("sentinel").path)
        var writer = try fixture.writer()
        let error = systemError { try writeFile(&writer, "evil", "overwritten\n") }
        writer.close()
        expectEqual(error?.errno, .exists)
        try fixture.expectOutsideUntouched()
    }

    @Test("a link planted at a directory component is not followed: nothing lands where it points")
    func linkAtDirectory() throws {
        let fixture = try StagingFixture()
        try FileManager.default.createSymbolicLink(atPath: fixture.staging.appendingPathComponent("dir").path,
                                                   withDestinationPath: fixture.outside.path)
        var writer = try fixture.writer()
        let error = systemError { try writeFile(&writer, "dir/escaped.txt", "out\n") }
        let madeError = systemError { try writer.makeDirectory(try entry("dir/sub/")) }
        writer.close()
        // mkdirat meets the link (EEXIST, taken as a directory made earlier); then
        // openat with O_DIRECTORY | O_NOFOLLOW refuses it, and Linux says ENOTDIR.
        expectEqual(error?.errno, .notDirectory, "\(String(describing: error))")
        expectEqual(madeError?.errno, .notDirectory, "\(String(describing: madeError))")
        try fixture.expectOutsideUntouched()
        expectEqual(writer.directoriesMade, 0)
    }

    @Test("a directory the writer made, then replaced by a link to outside, is not followed by the files after it")
    func madeDirectoryReplacedByLink() throws {
        let fixture = try StagingFixture()
        var writer = try fixture.writer()
        try writeFile(&writer, "made/one.txt", "1\n")
        let made = fixture.staging.appendingPathComponent("made")
        try FileManager.default.moveItem(at: made, to: fixture.base.appendingPathComponent("was-made"))
        try FileManager.default.createSymbolicLink(atPath: made.path, withDestinationPath: fixture.outside.path)
        let error = systemError { try writeFile(&writer, "made/two.txt", "2\n") }
        writer.close()
        // openat2's RESOLVE_NO_SYMLINKS refuses the link on the way with ELOOP.
        expectEqual(error?.errno, .tooManyLinks, "\(String(describing: error))")
        try fixture.expectOutsideUntouched()
    }

    @Test("a file where a directory is wanted is refused with ENOTDIR and left alone")
    func fileAsDirectory() throws {
        let fixture = try StagingFixture()
        var writer = try fixture.writer()
        try writeFile(&writer, "a", "file\n")
        let error = systemError { try writeFile(&writer, "a/b", "under a file\n") }
        writer.close()
        expectEqual(error?.errno, .notDirectory, "\(String(describing: error))")
        try expectEqual(String(contentsOf: fixture.staging.appendingPathComponent("a"), encoding: .utf8), "file\n")
    }

    @Test("writes follow the descriptor: staging renamed and replaced by another directory keeps receiving them")
    func descriptorRelative() throws {
        let fixture = try StagingFixture()
        var writer = try fixture.writer()
        try writeFile(&writer, "before/one.txt", "1\n")
        let moved = fixture.base.appendingPathComponent("moved")
        try FileManager.default.moveItem(at: fixture.staging, to: moved)
        try FileManager.default.createDirectory(at: fixture.staging, withIntermediateDirectories: false)
        try writeFile(&writer, "before/two.txt", "2\n")
        try writeFile(&writer, "after/three.txt", "3\n")
        writer.close()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: fixture.staging.path), [], "nothing went by path")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: moved.appendingPathComponent("before").path).sorted(), ["one.txt", "two.txt"])
        try expectEqual(String(contentsOf: moved.appendingPathComponent("after/three.txt"), encoding: .utf8), "3\n")
        try fixture.expectOutsideUntouched()
    }

    @Test("open directories stay bounded across many directories and deep paths; close() closes every one")
    func boundedDescriptors() throws {
        let fixture = try StagingFixture()
        var writer = try fixture.writer()
        let baseline = fixture.openDescriptors()
        expect(baseline >= 1, "the descriptor of staging itself is seen")
        var most = 0
        for index in 0..<60 {
            try writeFile(&writer, "spread/d\(index)/f.txt", "\(index)\n")
            most = max(most, fixture.openDescriptors() - baseline)
        }
        let deep = (0..<30).map { "l\($0)" }.joined(separator: "/")
        try writeFile(&writer, deep + "/bottom.txt", "deep\n")
        most = max(most, fixture.openDescriptors() - baseline)
        // Its cache holds 24 directories, or one path's worth when a path is deeper
        // (30 here), and the file being written.
        expect(most <= 30 + 1, "\(most) descriptors open at once")
        try writer.beginFile(try entry("left-open.txt"))
        expect(fixture.openDescriptors() > baseline)
        writer.close()
        expectEqual(fixture.openDescriptors(), baseline, "close() left descriptors open")
        expectEqual(writer.filesWritten, 61)
        expectEqual(writer.directoriesMade, 1 + 60 + 30)
        for index in [0, 23, 24, 59] {
            try expectEqual(String(contentsOf: fixture.staging.appendingPathComponent("spread/d\(index)/f.txt"), encoding: .utf8), "\(index)\n")
        }
        try expectEqual(String(contentsOf: fixture.staging.appendingPathComponent(deep + "/bottom.txt"), encoding: .utf8), "deep\n")
    }
}
