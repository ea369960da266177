@testable import AirlockArchive
import AirlockChild
import AirlockFormats
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A randomly named staging directory in the temporary directory (TMPDIR, as
/// every other test's), removed at the end.
private final class Staging {
    let path: String
    let descriptor: FileDescriptor

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/airlock-pipelined-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw Errno.current }
        path = String(cString: template)
        descriptor = try FileDescriptor.openDirectory(path: path)
    }

    deinit {
        descriptor.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Every entry beneath it, by relative path: its bytes, nil for a directory.
    func entries() throws -> [String: [UInt8]?] {
        var found: [String: [UInt8]?] = [:]
        for case let relative as String in FileManager.default.enumerator(atPath: path)! {
            var st = stat()
            expectEqual(lstat(path + "/" + relative, &st), 0)
            found[relative] = st.st_mode & S_IFMT == S_IFDIR ? .some(nil) : [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + "/" + relative)))
        }
        return found
    }
}

/// What a decoder's verdict is drawn from: everything of the outcome but its findings' order.
private struct Summary: Equatable {
    var reason: String?
    var entry: [UInt8]?
    var detail: String?
    var entries: Int
    var files: Int64
    var directories: Int64
    var bytesWritten: Int64
    var systemError: SystemError?
    var failedWhile: String

    init(_ outcome: ScanOutcome) {
        reason = outcome.findings.worst?.reason.rawValue
        entry = outcome.findings.worst?.entry
        detail = outcome.findings.worst?.detail
        entries = outcome.entries
        files = outcome.files
        directories = outcome.directories
        bytesWritten = outcome.bytesWritten
        systemError = outcome.systemError
        failedWhile = outcome.failedWhile.rawValue
    }
}

/// Scans `bytes` as `format` into `staging`, through the pipelined writer or the serial one.
private func scan(_ bytes: [UInt8], _ format: ArchiveFormat, policy: Policy = Policy(), into staging: Staging, pipelined: Bool) throws -> ScanOutcome {
    let drop = try ScratchFile.holding(bytes)
    defer { drop.close() }
    expectEqual(lseek(drop.rawValue, 0, SEEK_SET), 0, "a tar is read from the descriptor's offset")
    var scan = ArchiveScan(format: format, policy: policy, drop: drop, dropSize: Int64(bytes.count),
                           legacyNames: LegacyNames(zip: try TextConverter(from: "CP437"), tar: nil))
    var writer = StagingWriter(root: staging.descriptor, policy: policy)
    guard pipelined else { return scan.run(into: &writer) }
    return ArchiveDecoderProgram.scanIntoStaging(&scan, writer: writer, detector: nil, threads: nil).0
}

/// A ustar archive of the named files, each holding `size` bytes of its index.
private func tar(_ names: [String], size: Int) -> [UInt8] {
    ustarArchive(names.map { (name: $0, size: size) })
}

private struct CorpusCase: Decodable {
    let name: String
    let file: String
    let format: String
}

@Suite("The decoder's pipelined writer: the same outcome and the same staging as the serial writer")
struct PipelinedScanTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/archives")

    fileprivate static func corpus() throws -> [CorpusCase] {
        struct Manifest: Decodable { let cases: [CorpusCase] }
        let data = try Data(contentsOf: fixtures.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode(Manifest.self, from: data).cases.filter { ArchiveFormat(rawValue: $0.format) != nil }
    }

    @Test("every archive of the fixture corpus: outcome, reason, counts and staging identical, pipelined or serial")
    func corpusMatchesSerial() throws {
        let cases = try Self.corpus()
        expect(cases.count > 200)
        // Both writers get the same policy, with limits a twentieth of the defaults:
        // the cases made to pass the defaults' limits (100 MiB in all, 20 MiB a
        // file) then stop after 5 MiB, not 100, of writing, still mid-archive,
        // and the comparison costs a second of writes, not a gigabyte's.
        var policy = Policy()
        policy.maxTotalBytes = 5 << 20
        policy.maxFileBytes = 1 << 20
        for item in cases {
            let bytes = [UInt8](try Data(contentsOf: Self.fixtures.appendingPathComponent(item.file)))
            let format = ArchiveFormat(rawValue: item.format)!
            let serial = try Staging(), pipelined = try Staging()
            let expected = Summary(try scan(bytes, format, policy: policy, into: serial, pipelined: false))
            let found = Summary(try scan(bytes, format, policy: policy, into: pipelined, pipelined: true))
            expectEqual(found, expected, "\(item.name)")
            try expectEqual(pipelined.entries(), serial.entries(), "\(item.name)")
        }
    }

    @Test("a create refused mid-archive (EEXIST): the serial writer's system error, and staging as the serial writer left it")
    func refusedCreate() throws {
        let archive = tar((0..<60).map { "d\($0 % 6)/file-\($0)" }, size: 3000)
        let serial = try Staging(), pipelined = try Staging()
        for staging in [serial, pipelined] {
            expectEqual(mkdir(staging.path + "/d4", 0o700), 0)
            expect(FileManager.default.createFile(atPath: staging.path + "/d4/file-34", contents: Data("planted".utf8)))
        }
        let expected = try scan(archive, .tar, into: serial, pipelined: false)
        let found = try scan(archive, .tar, into: pipelined, pipelined: true)
        let error = try #require(expected.systemError)
        expectEqual(error.errno, .exists)
        expectEqual(found.systemError, error)
        expectEqual(found.failedWhile, .writingStaging)
        expectEqual(DecoderProgram.failure(found.systemError!).jsonText, DecoderProgram.failure(error).jsonText)
        try expectEqual(pipelined.entries(), serial.entries())
        try expectEqual(serial.entries()["d5/file-35"], nil, "nothing after the refused create landed")
    }

    @Test("max_total_bytes passed at the 5th file: the same finding, the same bytes written, the same files in staging")
    func limitStopsAtTheSameEntry() throws {
        var policy = Policy()
        policy.maxTotalBytes = 4 * 30_000 + 100
        let archive = tar((0..<8).map { "d/file-\($0)" }, size: 30_000)
        let serial = try Staging(), pipelined = try Staging()
        let expected = try scan(archive, .tar, policy: policy, into: serial, pipelined: false)
        let found = try scan(archive, .tar, policy: policy, into: pipelined, pipelined: true)
        expectEqual(expected.findings.worst?.reason, .totalTooLarge)
        expectEqual(Summary(found), Summary(expected))
        try expectEqual(pipelined.entries(), serial.entries())
        try expectEqual(serial.entries().count, 1 + 5, "d/, four whole files and the fifth cut where the total was passed")
    }

    @Test("content classes: files of 1 MiB or more classified on the writing thread, the rest on the scan's, each once, in scan order, as the serial scan has them")
    func classesSplitBetweenThreads() throws {
        let bound = Int(ArchiveDecoderProgram.writerClassifiesFrom)
        let archive = ustarArchive([
            (name: "a.js", size: 100), (name: "big.exe", size: bound), (name: "plain.txt", size: bound + 7),
            (name: "b.bat", size: bound - 1), (name: "big.cmd", size: 3 * bound), (name: "c.hta", size: 0),
        ])
        func classes(pipelined: Bool) throws -> [ClassifiedEntry] {
            let staging = try Staging()
            let drop = try ScratchFile.holding(archive)
            defer { drop.close() }
            expectEqual(lseek(drop.rawValue, 0, SEEK_SET), 0, "a tar is read from the descriptor's offset")
            var scan = ArchiveScan(format: .tar, policy: Policy(), drop: drop, dropSize: Int64(archive.count),
                                   legacyNames: LegacyNames(zip: try TextConverter(from: "CP437"), tar: nil))
            let writer = StagingWriter(root: staging.descriptor, policy: Policy())
            let (outcome, _, classes) = pipelined
                ? ArchiveDecoderProgram.scanIntoStaging(&scan, writer: writer, detector: nil, threads: nil)
                : ContentTypes.scan(&scan, into: writer, detector: nil)
            expectEqual(outcome.findings.worst?.reason, nil)
            expectEqual(outcome.files, 6)
            return classes
        }
        let serial = try classes(pipelined: false)
        expectEqual(serial.map(\.entry), ["a.js", "big.exe", "b.bat", "big.cmd", "c.hta"])
        expectEqual(try classes(pipelined: true), serial)
    }

    @Test("two classifying sinks splitting the files by declared size classify each file once, whatever the sizes declared")
    func sharesCoverEveryFileOnce() throws {
        func run(_ sizes: [Int64?]) throws -> (split: [ClassifiedEntry], whole: [ClassifiedEntry]) {
            var split = ClassifyingSink(ClassifyingSink(DiscardingSink(), share: .atLeast(1000)), share: .smallerThan(1000))
            var whole = ClassifyingSink(DiscardingSink())
            for (index, size) in sizes.enumerated() {
                let path = try EntryPath(validating: Array("f\(index).exe".utf8), policy: Policy())
                try split.beginFile(path, size: size)
                try whole.beginFile(path, size: size)
                let bytes: [UInt8] = [0x7F, 0x45, 0x4C, 0x46]
                try bytes.withUnsafeBytes { try split.write($0) }
                try bytes.withUnsafeBytes { try whole.write($0) }
                try split.endFile()
                try whole.endFile()
            }
            expectEqual(split.numbered.count + split.inner.numbered.count, sizes.count)
            return (ClassifyingSink<DiscardingSink>.merged(split.numbered, split.inner.numbered), whole.classified)
        }
        // Declared sizes are the archive's word: none, lies both ways, the bound itself.
        let found = try run([nil, 4, 999, 1000, 1 << 40, 0, nil, 1000])
        expectEqual(found.split, found.whole)
        expectEqual(found.whole.count, 8)
    }
}
