import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The decoder children running now, so that a stopping daemon can kill the ones
/// still busy when its grace period ends. Their drops are then abandoned, not
/// judged: they stay claimed for the next start.
public final class DecoderChildren: @unchecked Sendable {
    private let lock = NSLock()
    private var running: Set<pid_t> = []
    private var abandoning = false
    private var abandoned: Set<pid_t> = []

    public init() {}

    /// Records a started child; false (and the child killed) once abandoning began.
    func started(_ pid: pid_t) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !abandoning else {
            kill(pid, SIGKILL)
            abandoned.insert(pid)
            return false
        }
        running.insert(pid)
        return true
    }

    /// Forgets a reaped child; true when it was killed by `abandonAll`.
    func finished(_ pid: pid_t) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        running.remove(pid)
        return abandoned.remove(pid) != nil
    }

    /// Kills every running child and every child started from now on.
    public func abandonAll() {
        lock.lock()
        defer { lock.unlock() }
        abandoning = true
        for pid in running {
            kill(pid, SIGKILL)
            abandoned.insert(pid)
        }
    }

    public var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return running.count
    }
}
