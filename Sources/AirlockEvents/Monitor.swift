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

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with the lock held, then wakes every waiter to look again.
    package func withLock<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
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
    package func withLock<Result: Sendable>(when ready: (State) -> Bool, until deadline: Date? = nil,
                                             _ body: (inout State, _ ready: Bool) -> Result) -> Result {
        condition.lock()
        defer {
            condition.broadcast()
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
}
