@testable import AirlockArchive
import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A ustar archive of regular files of the given sizes, each filled with its index.
private func tar(_ sizes: [Int]) -> [UInt8] {
    ustarArchive(sizes.enumerated().map { (name: "file-\($0.offset)", size: $0.element) })
}

/// Counts what the scan hands over, chunk by chunk.
private struct CountingSink: EntrySink {
    var chunks = 0
    var bytes = 0
    /// The size the scan declared for each file it began.
    var declared: [Int64?] = []
    mutating func makeDirectory(_ path: EntryPath) {}
    mutating func beginFile(_ path: EntryPath, size: Int64?) { declared.append(size) }
    mutating func write(_ chunk: UnsafeRawBufferPointer) {
        chunks += 1
        bytes += chunk.count
    }
    mutating func endFile() {}
    mutating func close() {}
}

/// Scans `archive` as a tar under `policy`: the outcome, and what reached the sink.
private func scan(_ archive: [UInt8], _ policy: Policy) throws -> (outcome: ScanOutcome, sink: CountingSink) {
    let fd = try ScratchFile.holding(archive)
    defer { fd.close() }
    expectEqual(lseek(fd.rawValue, 0, SEEK_SET), 0)
    var sink = CountingSink()
    let names = LegacyNames(zip: try TextConverter(from: "CP437"), tar: nil)
    let outcome = ArchiveScan(format: .tar, policy: policy, drop: fd, dropSize: Int64(archive.count), legacyNames: names).run(into: &sink)
    return (outcome, sink)
}

@Suite("The scan counts extracted bytes against the total chunk by chunk, across entries, inclusive")
struct ScanAllowanceTests {
    static func policy(total: Int64) -> Policy {
        var policy = Policy()
        policy.maxFileBytes = 40_000
        policy.maxTotalBytes = total
        return policy
    }

    @Test("entries filling max_total_bytes exactly are written whole, in many chunks")
    func totalExactlyAtTheLimit() throws {
        let (outcome, sink) = try scan(tar([30_000, 30_000]), Self.policy(total: 60_000))
        expect(outcome.findings.isClean, "\(String(describing: outcome.findings.worst))")
        expect(outcome.bytesWritten == 60_000 && sink.bytes == 60_000)
        expect(sink.chunks > 2, "the data came in more chunks than entries")
    }

    @Test("one byte past max_total_bytes, in the last chunk of the last entry, is total-too-large")
    func totalOneByteOver() throws {
        let (outcome, sink) = try scan(tar([30_000, 30_001]), Self.policy(total: 60_000))
        expectEqual(outcome.findings.worst?.reason, .totalTooLarge)
        expectEqual(outcome.findings.worst?.detail, "more than 60000 bytes in all")
        expect(sink.bytes < 60_001, "the chunk that passes the total is never written")
        expectEqual(outcome.bytesWritten, Int64(sink.bytes))
    }

    @Test("each file is begun with the size its header declares, which a writer may reserve")
    func declaredSizesReachTheSink() throws {
        let (outcome, sink) = try scan(tar([30_000, 1, 0]), Self.policy(total: 60_000))
        expect(outcome.findings.isClean, "\(String(describing: outcome.findings.worst))")
        expectEqual(sink.declared, [30_000, 1, 0])
    }

    @Test("a file declaring more than the total allowance leaves is begun with no size: nothing is reserved for bytes it may not write")
    func declaredPastTheTotalIsNotPassedOn() throws {
        let (outcome, sink) = try scan(tar([30_000, 30_001]), Self.policy(total: 60_000))
        expectEqual(outcome.findings.worst?.reason, .totalTooLarge)
        expectEqual(sink.declared, [30_000, nil])
    }

    @Test("a sparse file is begun with no size: its declared size counts the holes, which are not written")
    func sparseEntriesDeclareNoSize() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/archives/tar-sparse-gnu.tar")
        let (outcome, sink) = try scan(Array(try Data(contentsOf: fixture)), Policy())
        expect(outcome.findings.isClean, "\(String(describing: outcome.findings.worst))")
        expect(!sink.declared.isEmpty)
        expect(sink.declared.allSatisfy { $0 == nil }, "\(sink.declared)")
    }

    @Test("limits at Int64.max let a drop through without an overflow")
    func limitsAtInt64Max() throws {
        var policy = Policy()
        policy.maxFileBytes = .max
        policy.maxTotalBytes = .max
        policy.maxRatio = .max
        let (outcome, sink) = try scan(tar([20_000, 1, 0]), policy)
        expect(outcome.findings.isClean, "\(String(describing: outcome.findings.worst))")
        expectEqual(sink.bytes, 20_001)
    }
}
