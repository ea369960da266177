#if canImport(Glibc)
import Glibc
#endif

/// A self-pipe: one thread sleeps in poll(2) on its read end until a deadline or
/// until another thread (a signal handler's dispatch source, a finished worker)
/// writes a byte. Both ends are non-blocking, so waking never blocks the waker and
/// draining never blocks the sleeper.
public final class WakePipe: Sendable {
    private let readEnd: OwnedDescriptor
    private let writeEnd: OwnedDescriptor
    private var read: FileDescriptor { readEnd.descriptor }
    private var write: FileDescriptor { writeEnd.descriptor }

    /// pipe2(2) with O_CLOEXEC, both ends made non-blocking.
    public init() throws(SystemError) {
        let ends = try makePipe()
        let read = OwnedDescriptor(ends.read), write = OwnedDescriptor(ends.write)
        try read.descriptor.setBlocking(false)
        try write.descriptor.setBlocking(false)
        readEnd = read
        writeEnd = write
    }

    /// Wakes the sleeper, or makes its next sleep return at once.
    public func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(write.rawValue, &byte, 1)  // a full pipe already means "wake up"
    }

    /// poll(2) on the read end for up to `milliseconds` (0: do not sleep), then
    /// drains what was written, so that one sleep answers every wake before it.
    public func sleep(milliseconds: Int32) {
        var fds = [pollfd(fd: read.rawValue, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, milliseconds)
        var buffer = [UInt8](repeating: 0, count: 256)
        while Glibc.read(read.rawValue, &buffer, buffer.count) > 0 {}
    }
}
