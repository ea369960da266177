#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// Starting a thread in a way that can fail out loud. Foundation's `Thread.start`
/// gives no error when pthread_create(3) is refused (EAGAIN on a host, or a pids
/// cgroup, out of tasks): the thread simply never runs, and whatever waits for
/// its work waits forever. Here the refusal is a thrown `SystemError`.
public enum SystemThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// pthread_create(3) of a detached thread running `body`, with `stackSize` bytes of stack.
    /// - Throws: `pthread_create` with its error (EAGAIN: no task left).
    public static func start(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        var attributes = pthread_attr_t()
        guard pthread_attr_init(&attributes) == 0 else { throw SystemError("pthread_attr_init", nil, Errno(rawValue: ENOMEM)) }
        defer { pthread_attr_destroy(&attributes) }
        _ = pthread_attr_setstacksize(&attributes, stackSize)
        _ = pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let error = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        guard error == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemError("pthread_create", nil, Errno(rawValue: error))
        }
    }
}

/// One thread, started by the first job handed to it and kept for the process's
/// life, that runs its jobs one at a time in the order they came. A thread that
/// never exits is what some work needs (the parent of children whose
/// parent-death signal follows it); for the rest it saves a thread's start and
/// end per job.
public final class SerialThread: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var running = false
    }

    private let state = Mutex(State())
    private let pending = DispatchSemaphore(value: 0)
    private let stackSize: Int

    public init(stackSize: Int = 1 << 20) { self.stackSize = stackSize }

    /// Queues `job` behind those handed over before it, starting the thread if it
    /// does not run yet (a later job tries again where an earlier one could not).
    /// - Throws: `pthread_create`'s refusal (a host out of tasks); `job` is then not queued.
    public func run(_ job: @escaping @Sendable () -> Void) throws(SystemError) {
        try state.withLock { (state) throws(SystemError) in
            if !state.running {
                try SystemThread.start(stackSize: stackSize) { [self] in serve() }
                state.running = true
            }
            state.jobs.append(job)
        }
        pending.signal()
    }

    private func serve() -> Never {
        while true {
            pending.wait()
            state.withLock { $0.jobs.removeFirst() }()
        }
    }
}
