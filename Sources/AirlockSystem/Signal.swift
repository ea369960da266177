#if canImport(Glibc)
import Glibc
#endif

/// A signal number, named for what airlock uses it for.
public struct Signal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let kill = Signal(rawValue: SIGKILL)
    public static let terminate = Signal(rawValue: SIGTERM)
    public static let interrupt = Signal(rawValue: SIGINT)
    public static let hangup = Signal(rawValue: SIGHUP)
    /// Sent to a lease holder when someone opens the leased file for writing.
    public static let io = Signal(rawValue: SIGIO)
    /// Sent to a process that writes past RLIMIT_FSIZE.
    public static let fileSizeExceeded = Signal(rawValue: SIGXFSZ)
    /// Sent to a process that writes to a pipe nobody reads.
    public static let brokenPipe = Signal(rawValue: SIGPIPE)

    /// signal(2) with SIG_IGN: this process ignores the signal from now on.
    public func ignore() {
        _ = Glibc.signal(rawValue, SIG_IGN)
    }

    /// signal(2) with SIG_DFL: the signal does what the kernel does by default.
    public func restoreDefault() {
        _ = Glibc.signal(rawValue, SIG_DFL)
    }

    /// Unblocks `signals` for the calling thread, whatever mask it inherited.
    public static func unblock(_ signals: [Signal]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal.rawValue) }
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    public var description: String { Termination.signalName(rawValue) }
}
