import AirlockEvents
import AirlockIntake
import AirlockTestSupport
import Foundation
import Synchronization
import Testing

/// Stands in for the intake: waits as `body` says, then accepts the ticket.
private struct StandInIntake: DropProcessor {
    let body: @Sendable (ClaimTicket) -> Void

    func process(_ ticket: ClaimTicket) -> DropOutcome {
        body(ticket)
        return DropOutcome(id: ticket.id, dropName: ticket.dropName, verdict: .accepted(output: ticket.dropName, files: 1, bytes: 0))
    }
}

private func tickets(_ count: Int) -> [ClaimTicket] {
    (0..<count).map { ClaimTicket(id: "drop-\($0)", dropName: Array("d\($0).zip".utf8)) }
}

@Suite("Worker pool: as many threads as asked for, each drop processed once, stopping waits for drops in flight")
struct WorkerPoolTests {
    @Test func workersAboveTheCoreCountAllRunAtOnce() {
        let workers = ProcessInfo.processInfo.activeProcessorCount * 4 + 2
        let arrived = Monitor(0)
        let metEveryPeer = Mutex(0)
        // Each drop waits for every other worker's drop to start: it can only pass
        // if `workers` of them are in flight at once.
        let pool = WorkerPool(StandInIntake { _ in
            arrived.withLock { $0 += 1 }
            let met = arrived.withLock(when: { $0 >= workers }, until: Date().addingTimeInterval(30)) { _, met in met }
            if met { metEveryPeer.withLock { $0 += 1 } }
        }, reported: { _ in })
        pool.start(workers)
        pool.enqueue(tickets(workers))
        pool.finish()
        let passed = metEveryPeer.withLock { $0 }
        expectEqual(passed, workers, "\(passed) of \(workers) workers saw every peer running at once")
    }

    @Test func everyDropIsProcessedOnceAndReportedOneAtATime() {
        let processed = Mutex<[String: Int]>([:])
        let reported = Mutex<[String]>([])
        let reporting = Atomic(0)
        let overlapped = Atomic(false)
        let pool = WorkerPool(StandInIntake { ticket in
            processed.withLock { $0[ticket.id, default: 0] += 1 }
        }, reported: { outcome in
            if reporting.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlapped.store(true, ordering: .sequentiallyConsistent) }
            reported.withLock { $0.append(outcome.id) }
            reporting.subtract(1, ordering: .sequentiallyConsistent)
        })
        let all = tickets(300)
        pool.start(8)
        pool.enqueue(Array(all[..<150]))
        pool.enqueue(Array(all[150...]))
        pool.finish()
        let expected = Set(all.map(\.id))
        let counts = processed.withLock { $0 }
        let reports = reported.withLock { $0 }
        let reportsOverlapped = overlapped.load(ordering: .sequentiallyConsistent)
        expectEqual(counts, Dictionary(uniqueKeysWithValues: expected.map { ($0, 1) }))
        expect(reports.count == all.count && Set(reports) == expected)
        expect(!reportsOverlapped)
        // Nobody collects: the outcomes went to the reporter only, and the workers ended.
        expect(pool.takeFinished().isEmpty && pool.inFlight == 0 && pool.queued == 0)
        expect(pool.waitForWorkers(until: Date()))
    }

    @Test func stoppingLeavesQueuedDropsAndWaitsForThoseInFlight() {
        let started = Monitor(0)
        let gate = Monitor(false)
        let collected = Atomic(0)
        let pool = WorkerPool(StandInIntake { _ in
            started.withLock { $0 += 1 }
            gate.withLock(when: { $0 }) { _, _ in }
        }, reported: { _ in }, collect: { collected.add(1, ordering: .relaxed) })
        pool.start(2)
        pool.enqueue(tickets(5))
        let bothStarted = started.withLock(when: { $0 == 2 }, until: Date().addingTimeInterval(30)) { _, ready in ready }
        expect(bothStarted)
        expectEqual(pool.inFlight, 2)
        expectEqual(pool.stop(), 3)
        // Both drops are still being processed: the workers have not ended.
        expect(!pool.waitForWorkers(until: Date().addingTimeInterval(0.2)))
        expect(pool.takeFinished().isEmpty)
        gate.withLock { $0 = true }
        expect(pool.waitForWorkers(until: Date().addingTimeInterval(30)))
        let finished = pool.takeFinished().map(\.id).sorted()
        expectEqual(finished, ["drop-0", "drop-1"])
        let startedInAll = started.read { $0 }
        expect(startedInAll == 2 && pool.inFlight == 0 && pool.queued == 0)
        // Each outcome woke the collector before its worker went back for more.
        let wakeUps = collected.load(ordering: .relaxed)
        expect(wakeUps >= 2)
    }
}
