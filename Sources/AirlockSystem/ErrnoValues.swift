#if canImport(Glibc)
import Glibc
#endif

// Errno values the core reports on its own account (a file it cannot make sense
// of, a peer that did not answer), named so it need not spell the C constants.
extension Errno {
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let protocolError = Errno(rawValue: EPROTO)
    public static let ioError = Errno(rawValue: EIO)
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    public static let busy = Errno(rawValue: EBUSY)
}
