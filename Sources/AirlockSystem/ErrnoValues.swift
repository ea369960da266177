#if canImport(Glibc)
import Glibc
#endif

// Errno values the core reports on its own account (a file it cannot make sense
// of, a peer that did not answer), named so it need not spell the C constants.
extension Errno {
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let notImplemented = Errno(rawValue: ENOSYS)
    public static let protocolError = Errno(rawValue: EPROTO)
    public static let ioError = Errno(rawValue: EIO)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let busy = Errno(rawValue: EBUSY)
    /// An instance of a fleet that another one has taken over: what it holds is stale.
    public static let stale = Errno(rawValue: ESTALE)
    /// A rename of a directory onto a file (a name taken in the outbox).
    public static let isDirectory = Errno(rawValue: EISDIR)
}
