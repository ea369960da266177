import AirlockRoot
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A directory of its own for one test, open, removed afterwards.
final class ScratchDirectory {
    let scratch: Scratch
    let descriptor: FileDescriptor
    var path: String { scratch.path }

    init() throws {
        scratch = try Scratch("commit")
        descriptor = try FileDescriptor.openDirectory(path: scratch.path)
    }

    deinit { descriptor.close() }
}

/// How a finished directory reaches its name where RENAME_NOREPLACE is refused.
@Suite("Commit modes: RENAME_NOREPLACE, or a plain rename of a never-empty directory")
struct CommitModeTests {
    @Test("a plain-rename commit moves a never-empty directory to a free name and reports a taken one as EEXIST, in both modes",
          arguments: [CommitMode.rename, CommitMode.noreplace])
    func commitModes(_ mode: CommitMode) throws {
        let directory = try ScratchDirectory()
        let fd = directory.descriptor
        for name in ["staged", "taken"] {
            try fd.makeDirectory(Array(name.utf8), mode: 0o700)
            try Data("x".utf8).write(to: URL(fileURLWithPath: directory.path + "/\(name)/file"))
        }
        do {
            try mode.move(Array("staged".utf8), in: fd, to: fd, Array("taken".utf8))
            Issue.record("a taken name was replaced")
        } catch {
            expectEqual(error.errno, .exists, "\(error)")
        }
        try expectEqual(String(contentsOfFile: directory.path + "/taken/file", encoding: .utf8), "x")
        try mode.move(Array("staged".utf8), in: fd, to: fd, Array("free".utf8))
        expect(FileManager.default.fileExists(atPath: directory.path + "/free/file"))
        expect(!FileManager.default.fileExists(atPath: directory.path + "/staged"))
    }

    @Test("the probe finds RENAME_NOREPLACE where the filesystem has it and leaves nothing behind")
    func probe() throws {
        let directory = try ScratchDirectory()
        expectEqual(CommitMode.probe(in: directory.descriptor), (ProcessInfo.processInfo.environment["AIRLOCK_TEST_COMMIT_MODE"] == "rename" ? .rename : .noreplace))
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: directory.path), [])
    }
}
