#if canImport(Glibc)
import Glibc
#endif

/// Advisory whole-file locks, flock(2): held by the open file description, so
/// closing the descriptor lets the lock go, and a process that dies drops it.
extension FileDescriptor {
    /// flock(2) with LOCK_EX: waits until this descriptor holds the lock alone.
    public func lockExclusive() throws(SystemError) {
        _ = try retrying("flock") { flock(rawValue, LOCK_EX) }
    }

    /// flock(2) with LOCK_EX | LOCK_NB: true when taken, false when someone else
    /// holds a lock (EWOULDBLOCK).
    public func tryLockExclusive() throws(SystemError) -> Bool {
        try tryLock(LOCK_EX)
    }

    /// `tryLockExclusive`, tried again every `milliseconds` until `seconds` have
    /// passed: true once taken, false while someone else still holds a lock.
    public func lockExclusive(within seconds: Double, every milliseconds: Int) throws(SystemError) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while true {
            if try tryLockExclusive() { return true }
            guard ContinuousClock.now < deadline else { return false }
            WallClock.sleep(milliseconds: milliseconds)
        }
    }

    /// flock(2) with LOCK_SH | LOCK_NB: true when taken, false when someone holds
    /// the exclusive lock (EWOULDBLOCK).
    public func tryLockShared() throws(SystemError) -> Bool {
        try tryLock(LOCK_SH)
    }

    /// flock(2) with LOCK_UN. Failing to let go is not reported: closing the
    /// descriptor lets go anyway.
    public func unlock() {
        _ = try? retrying("flock") { flock(rawValue, LOCK_UN) }
    }

    private func tryLock(_ operation: Int32) throws(SystemError) -> Bool {
        do {
            _ = try retrying("flock") { flock(rawValue, operation | LOCK_NB) }
            return true
        } catch where error.errno == .wouldBlock {
            return false
        }
    }
}
