#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims
import Synchronization

/// What a spawned child finds at one of its descriptor numbers.
public enum ChildDescriptor: Sendable {
    /// A descriptor of this process, duplicated onto `target` in the child.
    case inherit(FileDescriptor, as: Int32)
    /// /dev/null opened for reading at `target`.
    case nullInput(Int32)
    /// /dev/null opened for writing at `target`.
    case nullOutput(Int32)
}

/// A child process held by a pidfd rather than by its pid.
///
/// A pid names whichever process has it now: once a child is reaped, `kill(pid)`
/// can reach an unrelated process that reused the number. A pidfd names the one
/// process it was opened for; after that process exits, a signal through it
/// fails with ESRCH and reaches nobody. The pidfd is opened right after
/// posix_spawn, before anything can wait for the child, so the pid cannot have
/// been reused in between; signals and the wait go through it, and once closed
/// the handle signals nothing at all (its number may belong to another file by then).
public final class ChildProcess: Sendable {
    /// The child's pid, for logs and for what the child is told of its parent.
    public let pid: Int32
    /// The pidfd; nil once closed. Held under the lock so that a signal sent from
    /// another thread never races the close and reaches a reused descriptor number.
    private let pidfd: Mutex<Int32?>

    init(pid: Int32, pidfd: Int32) {
        self.pid = pid
        self.pidfd = Mutex(pidfd)
    }

    deinit { close() }

    /// posix_spawn(3) of `executable` followed by pidfd_open(2).
    ///
    /// Every signal's disposition is reset to its default and the signal mask is
    /// empty; the environment is exactly `environment`. Descriptors are set up as
    /// `descriptors` says, in order; every descriptor above the highest target is
    /// closed in the child, close-on-exec or not, so none of this process's
    /// other descriptors (a library's included) stays open in it.
    /// - Throws: `posix_spawn` with the executable's name, `fcntl(F_DUPFD_CLOEXEC)`,
    ///   or `pidfd_open` (the child is then killed and reaped before this returns).
    public static func spawn(_ executable: String, arguments: [String], environment: [String],
                             descriptors: [ChildDescriptor]) throws(SystemError) -> ChildProcess {
        // Every inherited descriptor is lifted above the target numbers first, so
        // no dup2 in the child has the same source and target.
        let floor = max(10, (descriptors.map(\.target).max() ?? 0) + 1)
        // The lifted copies are the child's now; ours close when this returns.
        var lifted = OwnedDescriptors()
        var actions: [Int32] = []
        for descriptor in descriptors {
            switch descriptor {
            case .inherit(let fd, let target):
                let copy = FileDescriptor(rawValue: try retrying("fcntl(F_DUPFD_CLOEXEC)") { fcntl(fd.rawValue, F_DUPFD_CLOEXEC, floor) })
                lifted.append(OwnedDescriptor(copy))
                actions += [copy.rawValue, target]
            case .nullInput(let target): actions += [-1, target]
            case .nullOutput(let target): actions += [-2, target]
            }
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = airlock_spawn(&pid, executable, actions, Int32(actions.count), argv, envp)
        guard spawned == 0 else { throw SystemError("posix_spawn", Array(executable.utf8), Errno(rawValue: spawned)) }
        let pidfd = airlock_pidfd_open(pid)
        guard pidfd >= 0 else {
            let error = Errno.current
            // Not waited for yet, so this pid is still the child's own.
            _ = airlock_kill_unreaped(pid, SIGKILL)
            _ = airlock_reap(pid)
            throw SystemError("pidfd_open", nil, error)
        }
        return ChildProcess(pid: pid, pidfd: pidfd)
    }

    /// pidfd_send_signal(2): true when the signal was delivered; false when the
    /// child has already exited (reaped or not) or this handle is closed, in which
    /// case nothing was signalled.
    @discardableResult
    public func signal(_ signal: Signal) -> Bool {
        pidfd.withLock { pidfd in
            guard let pidfd else { return false }
            return airlock_pidfd_send_signal(pidfd, signal.rawValue) == 0
        }
    }

    /// waitid(P_PIDFD) until the child exits, retrying EINTR: how it ended and its
    /// peak resident set size in KiB. Only the thread that owns the handle waits.
    public func wait() throws(SystemError) -> (termination: Termination, maxRSSKiB: Int64) {
        guard let fd = pidfd.withLock({ $0 }) else { throw SystemError("waitid", nil, Errno(rawValue: EBADF)) }
        var exited: Int32 = 0
        var code: Int32 = 0
        var maxRSS = 0
        _ = try retrying("waitid") { airlock_pidfd_wait(fd, &exited, &code, &maxRSS) }
        return (exited != 0 ? .exited(code) : .signalled(code), Int64(maxRSS))
    }

    /// Closes the pidfd; from then on `signal` reaches nothing. Idempotent.
    public func close() {
        let fd = pidfd.withLock { pidfd in
            defer { pidfd = nil }
            return pidfd
        }
        if let fd { FileDescriptor(rawValue: fd).close() }
    }

    /// The pidfd's number while open, for tests that check it is released.
    package var descriptorNumber: Int32? { pidfd.withLock { $0 } }
}

extension ChildDescriptor {
    var target: Int32 {
        switch self {
        case .inherit(_, let target), .nullInput(let target), .nullOutput(let target): return target
        }
    }
}
