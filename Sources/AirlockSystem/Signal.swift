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

/// The calling process itself.
public enum CurrentProcess {
    /// getpid(2).
    public static var id: Int32 { getpid() }

    /// getppid(2): the parent now, which is not the one that started this process
    /// once that one has died and this process was reparented.
    public static var parentID: Int32 { getppid() }

    /// SIGKILL to this process: it dies here, as abruptly as a crash or an
    /// operator's kill -9 would end it.
    public static func kill() -> Never {
        _ = Glibc.kill(getpid(), SIGKILL)
        // SIGKILL to oneself is delivered before kill(2) returns; this is never reached.
        abort()
    }

    /// exit(3): flushes stdio and leaves with `status`.
    public static func exit(_ status: Int32) -> Never {
        Glibc.exit(status)
    }

    /// getenv(3); nil when the variable is unset.
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
