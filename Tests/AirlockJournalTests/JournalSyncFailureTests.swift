@testable import AirlockJournal
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// After one failed fsync, the journal of this process is neither written nor
/// consulted: a line the kernel could not write may still be readable from the
/// page cache, and a retry must not take it for a durable record.
@Suite("Journal: once an fsync has failed, no append or look-up is trusted until restart")
struct JournalSyncFailureTests {
    private let id = "20261130T000000Z-0000f00d"

    private func rejected(_ id: String) -> JournalRecord {
        .rejected(.init(drop: .init(id: id, drop: "x.zip"), reason: "unsafe-path", bytesWritten: 0))
    }

    @Test("a real fsync failure (the journal is a FIFO) stops appends, look-ups and appendOnce, and writes nothing more")
    func latched() throws {
        let state = try JournalLookupTests.StateDirectory()
        // fsync(2) of a FIFO fails with EINVAL: the journal's own write path meets a
        // real failed fsync, with the line already written into the FIFO.
        expectEqual(mkfifo(state.path + "/journal.jsonl", 0o600), 0)
        let journal = Journal(state: state.descriptor)
        #expect(throws: SystemError.self) { try journal.append(rejected(id)) }
        expectEqual(unlink(state.path + "/journal.jsonl"), 0)

        // With the FIFO gone every call would now succeed: the kept failure refuses them.
        #expect(throws: SystemError.self) { try journal.append(rejected(id)) }
        #expect(throws: SystemError.self) { try journal.appendOnce(rejected(id), unless: ["rejected"]) }
        #expect(throws: SystemError.self) { try journal.record(id: id, events: ["rejected"]) }
        // A copy of the value (another worker's) is refused as well.
        let copy = journal
        #expect(throws: SystemError.self) { try copy.append(.claimed(.init(drop: .init(id: id, drop: "x.zip")))) }
        expect(!FileManager.default.fileExists(atPath: state.path + "/journal.jsonl"), "nothing was written after the failure")

        // The next start (a new Journal) trusts the disk again and writes normally.
        let restarted = Journal(state: state.descriptor)
        try expect(restarted.appendOnce(rejected(id), unless: ["rejected"]))
        try expect(restarted.record(id: id, events: ["rejected"]) != nil)
        try expectEqual(restarted.records().count, 1)
    }

    @Test("the refusal says why and what to do")
    func message() {
        let failure = JournalSyncFailure()
        #expect(throws: Never.self) { try failure.check() }
        failure.record(SystemError("fsync", Array("journal.jsonl".utf8), .ioError))
        failure.record(SystemError("fsync", Array("state".utf8), .invalidArgument))
        do {
            try failure.check()
            Issue.record("a kept failure must throw")
        } catch {
            expectEqual(error.errno, .ioError)
            expect(error.description.contains("fsync \"journal.jsonl\""), "the first failure is the one named: \(error)")
            expect(error.description.contains("restart airlock"))
        }
    }
}
