#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims

extension FileDescriptor {
    /// fcntl(F_SETLEASE, F_RDLCK): succeeds only while nobody holds the file open
    /// for writing. While held, a writer's open makes the kernel send SIGIO.
    /// - Throws: EAGAIN when a writer has it open; EACCES or EINVAL where the
    ///   kernel grants no leases (another owner's file, some filesystems).
    public func takeReadLease() throws(SystemError) {
        _ = try retrying("fcntl(F_SETLEASE)") { airlock_take_read_lease(rawValue) }
    }

    /// fcntl(F_SETLEASE, F_UNLCK); closing the descriptor releases it too.
    public func releaseLease() {
        _ = airlock_release_lease(rawValue)
    }
}
