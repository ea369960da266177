#if canImport(Glibc)
import Glibc
#endif

/// State that threads wait on, for the programs that do without Foundation and
/// Dispatch (the decoder children): a pthread mutex and condition variable
/// guarding one value. `state` is reachable only inside the closures below,
/// which run with the mutex held, which is why the type may be
/// `@unchecked Sendable`.
public final class WaitableState<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        // Default attributes cannot fail to initialise on Linux.
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held, then wakes every waiter to look again.
    public func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return body(&state)
    }

    /// Waits until `ready` holds, then runs `body` with the mutex still held.
    public func withLock<Result>(when ready: (State) -> Bool, _ body: (inout State) -> Result) -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        // pthread_cond_wait may wake without a signal: the loop looks again.
        while !ready(state) { pthread_cond_wait(condition, mutex) }
        return body(&state)
    }
}
