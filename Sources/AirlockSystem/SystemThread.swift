#if canImport(Glibc)
import Glibc
#endif

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
