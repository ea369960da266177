#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims

/// How a child process ended, from waitpid(2)'s status word.
public enum Termination: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    public init(waitStatus status: Int32) {
        if status & 0x7F == 0 {
            self = .exited((status >> 8) & 0xFF)
        } else {
            self = .signalled(status & 0x7F)
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signalled(let signal): return "killed by signal \(Termination.signalName(signal))"
        }
    }

    public static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGABRT: return "SIGABRT"
        case SIGILL: return "SIGILL"
        case SIGSEGV: return "SIGSEGV"
        case SIGBUS: return "SIGBUS"
        case SIGKILL: return "SIGKILL"
        case SIGXCPU: return "SIGXCPU"
        case SIGXFSZ: return "SIGXFSZ"
        case SIGSYS: return "SIGSYS"
        case SIGTRAP: return "SIGTRAP"
        case SIGFPE: return "SIGFPE"
        case SIGTERM: return "SIGTERM"
        default: return "signal \(signal)"
        }
    }
}

/// pipe2(2) with O_CLOEXEC: (read end, write end).
public func makePipe() throws(SystemError) -> (read: FileDescriptor, write: FileDescriptor) {
    var fds: [Int32] = [-1, -1]
    _ = try retrying("pipe2") { airlock_pipe_cloexec(&fds) }
    return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
}

/// poll(2) on one descriptor for input; false when `milliseconds` pass first.
public func waitReadable(_ fd: FileDescriptor, milliseconds: Int32) throws(SystemError) -> Bool {
    var entry = pollfd(fd: fd.rawValue, events: Int16(POLLIN), revents: 0)
    let n = try retrying("poll") { poll(&entry, 1, milliseconds) }
    return n > 0
}

/// Monotonic clock in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// prctl(PR_SET_NO_NEW_PRIVS): this process and its children can never gain
/// privileges through execve (setuid binaries, file capabilities).
public func forbidNewPrivileges() throws(SystemError) {
    _ = try retrying("prctl(PR_SET_NO_NEW_PRIVS)") { airlock_set_no_new_privs() }
}
