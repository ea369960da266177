@testable import AirlockJournal
import AirlockSystem
import AirlockTestSupport
import Foundation
import Synchronization
import Testing

/// The journal's group commit, on which "durable on return" rests once several
/// workers append at once.
@Suite("Journal batches: concurrent appends share a write and an fsync; each returns only with its batch's result")
struct JournalBatchTests {
    /// Runs `body(thread, index)` `each` times on each of `threads` threads of
    /// their own (dispatch's pool may run the loops one after another, and then
    /// nothing overlaps); returns when all are done.
    private func onThreads(_ threads: Int, _ each: Int, _ body: @escaping @Sendable (Int, Int) -> Void) {
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread {
                for index in 0..<each { body(thread, index) }
                done.leave()
            }.start()
        }
        done.wait()
    }

    @Test("eight workers appending at once: every record once and whole")
    func concurrentAppends() throws {
        let state = try JournalLookupTests.StateDirectory()
        let journal = Journal(state: state.descriptor)
        let threads = 8, each = 25
        let failures = Mutex<[String]>([])
        onThreads(threads, each) { thread, index in
            let id = String(format: "20261130T000000Z-%04x%04x", thread, index)
            do {
                try journal.append(.rejected(.init(drop: .init(id: id, drop: "x.zip"), reason: "unsafe-path", bytesWritten: 0)))
            } catch {
                failures.withLock { $0.append("\(id): \(error)") }
            }
        }
        expect(failures.withLock { $0 }.isEmpty)
        let ids = try journal.records().compactMap(\.record.id)
        expectEqual(ids.count, threads * each)
        expectEqual(Set(ids).count, threads * each, "each record exactly once")
        // Every line parsed, so no two writes interleaved inside a line.
        let text = try String(contentsOfFile: state.path + "/journal.jsonl", encoding: .utf8)
        expectEqual(text.split(separator: "\n").count, threads * each)
        expect(journal.batch.batches >= 1 && journal.batch.batches <= UInt64(threads * each), "\(journal.batch.batches) batches")
    }

    @Test("a batch that fails fails every caller whose line it held, leader or not")
    func failureReachesEveryCaller() {
        let batch = JournalBatch()
        let threads = 8
        let started = Mutex(0), succeeded = Mutex(0), failed = Mutex(0), lines = Mutex(0)
        onThreads(threads, 1) { _, _ in
            started.withLock { $0 += 1 }
            do {
                try batch.append([0x78, 0x0A]) { (written) throws(SystemError) in
                    // The first batch waits, as a slow fsync would, until every
                    // thread has called: the rest queue behind it and share the next.
                    if lines.withLock({ $0 }) == 0 {
                        let deadline = Date().addingTimeInterval(10)
                        while started.withLock({ $0 }) < threads && Date() < deadline { usleep(1000) }
                        usleep(100_000)
                    }
                    lines.withLock { $0 += written.count }
                    throw SystemError("fsync", Array("journal.jsonl".utf8), .ioError)
                }
                succeeded.withLock { $0 += 1 }
            } catch {
                expectEqual((error as? SystemError)?.errno, .ioError)
                failed.withLock { $0 += 1 }
            }
        }
        expectEqual(succeeded.withLock { $0 }, 0)
        expectEqual(failed.withLock { $0 }, threads)
        expectEqual(lines.withLock { $0 }, threads, "each line was handed to exactly one batch")
        // Fewer batches than callers: some callers were not the leader, and failed all the same.
        expect(batch.batches < UInt64(threads), "\(batch.batches) batches")
    }

    @Test("a claimed record returns without waiting for an fsync; outcomes and deferrals wait")
    func whichRecordsWait() {
        let drop = JournalRecord.Drop(id: "20261130T000000Z-00000001", drop: "x.zip")
        expect(!Journal.waitsForSync(.claimed(.init(drop: drop))))
        expect(Journal.waitsForSync(.rejected(.init(drop: drop, reason: "unsafe-path", bytesWritten: 0))))
        expect(Journal.waitsForSync(.accepted(.init(drop: drop, output: "outbox/x", files: 1, bytes: 1))))
        expect(Journal.waitsForSync(.deferred(.init(drop: drop, detail: "no room"))))
    }
}
