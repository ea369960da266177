import AirlockEvents
import AirlockSystem
import Foundation
import Synchronization

/// What a worker does with a claimed drop: the intake, or a stand-in in tests.
package protocol DropProcessor: Sendable {
    func process(_ ticket: ClaimTicket) -> DropOutcome
}

extension Intake: DropProcessor {}

/// A fixed set of worker threads, each running one claimed drop at a time
/// through the intake (and so one decoder child). The daemon and `run --once`
/// both use it. Claimed drops wait in a queue the caller keeps bounded; when a
/// dispatcher collects them, outcomes wait in `finished` until it does.
///
/// Threads of its own, not dispatch's: dispatch runs no more of its threads at
/// once than there are cores, and `watch.workers` may ask for more, since a
/// worker spends its time waiting on a decoder child rather than computing.
package final class WorkerPool<Processor: DropProcessor>: Sendable {
    private struct State: Sendable {
        var current: Processor
        var queue: [ClaimTicket] = []
        var queueHead = 0
        var running = 0
        var finished: [DropOutcome] = []
        var stopping = false
        var workers = 0

        var queued: Int { queue.count - queueHead }
    }

    private let state: Monitor<State>
    /// Serialises `reported`, which the callers expect one drop at a time.
    private let reporting = Mutex(())
    /// Called on the worker, serialised with the other workers, as each drop ends.
    private let reported: @Sendable (DropOutcome) -> Void
    /// Called after each outcome is kept for `takeFinished`, so the dispatcher
    /// wakes to collect it; nil when nobody collects, and nothing is kept.
    private let collect: (@Sendable () -> Void)?

    package init(_ processor: Processor, reported: @escaping @Sendable (DropOutcome) -> Void,
                collect: (@Sendable () -> Void)? = nil) {
        self.state = Monitor(State(current: processor))
        self.reported = reported
        self.collect = collect
    }

    /// Starts up to `count` more workers; how many started. A thread the host
    /// refuses (EAGAIN: out of tasks) is not counted, so nothing waits for a
    /// worker that never runs; the caller decides what to do with fewer.
    @discardableResult
    package func start(_ count: Int) -> Int {
        var started = 0
        for _ in 0..<count {
            state.withLock { $0.workers += 1 }
            do {
                try SystemThread.start { [self] in work() }
                started += 1
            } catch {
                state.withLock { $0.workers -= 1 }
                break
            }
        }
        return started
    }

    /// How many workers run now.
    package var workerCount: Int {
        state.read { $0.workers }
    }

    /// The processor the next drops go through (the intake, after a reload).
    package func replaceIntake(_ replacement: Processor) {
        state.withLock { $0.current = replacement }
    }

    /// The processor in force, for the dispatcher's claims and recovery.
    package var intake: Processor {
        state.read { $0.current }
    }

    package func enqueue(_ tickets: [ClaimTicket]) {
        guard !tickets.isEmpty else { return }
        state.withLock { $0.queue.append(contentsOf: tickets) }
    }

    package var queued: Int {
        state.read { $0.queued }
    }

    package var inFlight: Int {
        state.read { $0.running }
    }

    package func takeFinished() -> [DropOutcome] {
        state.withLock { state in
            defer { state.finished.removeAll() }
            return state.finished
        }
    }

    /// Stops handing out drops; returns how many queued drops were left claimed.
    package func stop() -> Int {
        state.withLock { state in
            state.stopping = true
            let abandoned = state.queued
            state.queue.removeAll()
            state.queueHead = 0
            return abandoned
        }
    }

    /// Waits for every worker to end; false if the deadline came first.
    package func waitForWorkers(until deadline: Date? = nil) -> Bool {
        state.withLock(when: { $0.workers == 0 }, until: deadline) { _, ended in ended }
    }

    /// Waits until every queued drop has been processed, then ends the workers.
    package func finish() {
        state.withLock(when: { $0.queued == 0 && $0.running == 0 }) { state, _ in state.stopping = true }
        _ = waitForWorkers()
    }

    private func work() {
        while let (ticket, processor) = next() {
            let outcome = processor.process(ticket)
            // Reported outside the pool's lock, under one of its own: a report that
            // waits (on output, say) holds up this worker alone, never the others
            // taking drops or the dispatcher collecting them.
            reporting.withLock { _ in reported(outcome) }
            // A drop's end can end only `finish`'s wait, and only the last running
            // drop's with the queue empty: the others wake nobody.
            let idle = state.withLock(waking: .none) { state in
                state.running -= 1
                if collect != nil { state.finished.append(outcome) }
                return state.running == 0 && state.queued == 0
            }
            if idle { state.withLock { _ in } }
            collect?()
        }
        collect?()
    }

    private func next() -> (ClaimTicket, Processor)? {
        // Taking a drop ends no wait, and wakes nobody; a worker that ends wakes
        // whoever waits for the workers to end.
        let taken = state.withLock(when: { $0.queued > 0 || $0.stopping }, waking: .none) { state, _ -> (ClaimTicket, Processor)? in
            if state.stopping { return nil }
            let ticket = state.queue[state.queueHead]
            state.queueHead += 1
            if state.queueHead == state.queue.count {
                state.queue.removeAll(keepingCapacity: true)
                state.queueHead = 0
            }
            state.running += 1
            return (ticket, state.current)
        }
        if taken == nil { state.withLock { $0.workers -= 1 } }
        return taken
    }
}
