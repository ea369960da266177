import CAirlockShims

/// Linux file leases, fcntl(2) F_SETLEASE: a read lease is granted only while no
/// one holds the file open for writing, which is how the watcher tells a finished
/// upload from one still being written; and it is broken the moment anyone opens
/// the file for writing or truncates it, which is how the manifest knows that a
/// file hashed while the decoder ran has not changed since.
extension FileDescriptor {
    /// fcntl(F_SETLEASE, F_RDLCK).
    ///
    /// - Throws: `SystemError` with EAGAIN while someone has the file open for
    ///   writing; EACCES or EINVAL where the kernel or filesystem grants no leases
    ///   (not the owner without CAP_LEASE, overlay and network filesystems).
    public func takeReadLease() throws(SystemError) {
        _ = try retrying("fcntl(F_SETLEASE)") { airlock_take_read_lease(rawValue) }
    }

    /// fcntl(F_SETLEASE, F_UNLCK). Not reported when it fails: closing the
    /// descriptor lets the lease go anyway.
    public func releaseLease() {
        _ = try? retrying("fcntl(F_SETLEASE)") { airlock_release_lease(rawValue) }
    }

    /// Whether this descriptor's read lease still stands: fcntl(F_GETLEASE) is
    /// F_RDLCK. False once the lease was broken or is being broken (the kernel
    /// reports the type it is breaking to), or was never taken.
    public func holdsReadLease() throws(SystemError) -> Bool {
        try retrying("fcntl(F_GETLEASE)") { airlock_holds_read_lease(rawValue) } == 1
    }
}
