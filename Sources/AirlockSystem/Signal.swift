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

    /// signal(2) with SIG_IGN: this process ignores the signal from now on.
    public func ignore() {
        _ = Glibc.signal(rawValue, SIG_IGN)
    }

    public var description: String { Termination.signalName(rawValue) }
}
