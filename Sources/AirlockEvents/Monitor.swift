import Foundation

/// State that threads wait on: a `Mutex` that can also wait for a condition.
///
/// Synchronization's `Mutex` cannot wait, and a worker waiting for a drop, or
/// for a peer's sync to cover its writes, must. This is the one place where
/// state is guarded by hand, which is why it is `@unchecked Sendable`: the
/// compiler cannot see that `condition`'s lock guards `state`. What makes it
/// sound is the shape `Mutex` has too: `state` is reachable only inside the
/// closures below, which run with the lock held, and only `Sendable` values
/// go in or come out.
package final class Monitor<State: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var state: State

    /// Whom a change wakes once `body` is done.
    ///
    /// Every waiter of a monitor shares its one condition, so a broadcast wakes
    /// all of them, and each takes the lock in turn only to find its own wait
    /// not over: with eight workers waiting for two decode slots, every slot
    /// given back woke seven threads, one to take it and six to sleep again (a
    /// fifth of the supervisor's context switches over 2,000 keyed drops). A
    /// caller that knows what its change can end says so.
    package enum Waking: Sendable {
        /// Every waiter looks again: the change may end any wait, or several.
        case all
        /// One waiter looks again: the change ends one wait at most, and every
        /// waiter waits for the same thing (a slot given back, say).
        case one
        /// Nobody: the change can end no wait (a ticket taken, a count spent).
        case none
    }

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the lock held, then wakes the waiters `waking` names
    /// (every one by default) to look again.
    package func withLock<Result: Sendable>(waking: Waking = .all, _ body: (inout State) -> Result) -> Result {
        condition.lock()
        defer {
            wake(waking)
            condition.unlock()
        }
        return body(&state)
    }

    /// Reads the state with the lock held, waking nobody.
    package func read<Result: Sendable>(_ body: (State) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body(state)
    }

    /// Waits until `ready` holds, then runs `body` with the lock still held (as
    /// `withLock` does). With a `deadline`, `body` runs when it passes too, and
    /// is told by its second argument whether `ready` held.
    package func withLock<Result: Sendable>(when ready: (State) -> Bool, until deadline: Date? = nil, waking: Waking = .all,
                                             _ body: (inout State, _ ready: Bool) -> Result) -> Result {
        condition.lock()
        defer {
            wake(waking)
            condition.unlock()
        }
        while !ready(state) {
            if let deadline {
                if !condition.wait(until: deadline) { return body(&state, ready(state)) }
            } else {
                condition.wait()
            }
        }
        return body(&state, true)
    }

    private func wake(_ waking: Waking) {
        switch waking {
        case .all: condition.broadcast()
        case .one: condition.signal()
        case .none: break
        }
    }
}
