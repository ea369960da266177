import AirlockCore
import Foundation

/// A fixed set of worker threads, each running one claimed drop at a time
/// through the intake (and so one decoder child). Claimed drops wait in a queue
/// the dispatcher keeps bounded; outcomes wait in `finished` until it collects
/// them. Everything shared is under `state`.
final class WorkerPool: @unchecked Sendable {
    private let state = NSCondition()
    private var current: Intake
    private var queue: [ClaimTicket] = []
    private var queueHead = 0
    private var running = 0
    private var finished: [DropOutcome] = []
    private var stopping = false
    private var workers = 0
    /// Called on the worker, serialised with the other workers, as each drop ends.
    private let reported: @Sendable (DropOutcome) -> Void
    /// Called after each outcome is queued, so the dispatcher wakes to collect it.
    private let wake: @Sendable () -> Void

    init(intake: Intake, reported: @escaping @Sendable (DropOutcome) -> Void, wake: @escaping @Sendable () -> Void) {
        self.current = intake
        self.reported = reported
        self.wake = wake
    }

    func start(_ count: Int) {
        for _ in 0..<count {
            state.lock()
            workers += 1
            state.unlock()
            let thread = Thread { [self] in loop() }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// The intake the next drops go through (after a reload).
    func replaceIntake(_ replacement: Intake) {
        state.lock()
        current = replacement
        state.unlock()
    }

    /// The intake in force, for the dispatcher's claims and recovery.
    var intake: Intake {
        state.lock()
        defer { state.unlock() }
        return current
    }

    func enqueue(_ tickets: [ClaimTicket]) {
        guard !tickets.isEmpty else { return }
        state.lock()
        queue.append(contentsOf: tickets)
        state.broadcast()
        state.unlock()
    }

    var queued: Int {
        state.lock()
        defer { state.unlock() }
        return queue.count - queueHead
    }

    var inFlight: Int {
        state.lock()
        defer { state.unlock() }
        return running
    }

    func takeFinished() -> [DropOutcome] {
        state.lock()
        defer { state.unlock() }
        let done = finished
        finished.removeAll()
        return done
    }

    /// Stops handing out drops; returns how many queued drops were left claimed.
    func stop() -> Int {
        state.lock()
        defer { state.unlock() }
        stopping = true
        let abandoned = queue.count - queueHead
        queue.removeAll()
        queueHead = 0
        state.broadcast()
        return abandoned
    }

    /// Waits for every worker to end; false if the deadline came first.
    func waitForWorkers(until deadline: Date) -> Bool {
        state.lock()
        defer { state.unlock() }
        while workers > 0 {
            if !state.wait(until: deadline) { return workers == 0 }
        }
        return true
    }

    private func loop() {
        while let (ticket, current) = next() {
            let outcome = current.process(ticket)
            state.lock()
            reported(outcome)
            running -= 1
            finished.append(outcome)
            state.broadcast()
            state.unlock()
            wake()
        }
        wake()
    }

    private func next() -> (ClaimTicket, Intake)? {
        state.lock()
        defer { state.unlock() }
        while queueHead == queue.count && !stopping { state.wait() }
        if stopping {
            workers -= 1
            state.broadcast()
            return nil
        }
        let ticket = queue[queueHead]
        queueHead += 1
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        running += 1
        return (ticket, current)
    }
}
