import AirlockSystem

/// A large drop's page cache, given back once nothing reads the drop any more.
///
/// An accepted drop is removed after its commit, and removing a file frees its
/// cached pages there, on the path to the end of the drop (about 3 ms for a
/// 36 MiB drop). Once the decoder has exited and the drop's hash is read, the
/// supervisor reads the drop no more, so the pages are let go on a thread of
/// their own while the audit hashes the last staged files, and the removal
/// after the commit has only the inode and its blocks left to free. A drop that
/// ends rejected or deferred keeps its bytes (in quarantine, or claimed); only
/// a later read of it goes to the disk.
enum DropPages {
    /// Smaller drops are left to the removal: a thread costs more than their pages.
    static let releaseMinimumBytes: Int64 = 8 << 20

    /// Lets `drop`'s pages go once `hashed` returns (the drop's hash has read
    /// it all), on a copy of the descriptor that the thread closes. Where no copy
    /// or no thread can be had, nothing is done: the removal frees the pages.
    /// - Returns: whether a thread was started to do it.
    @discardableResult
    static func release(_ drop: FileDescriptor, size: Int64, after hashed: @escaping @Sendable () -> String?) -> Bool {
        guard size >= releaseMinimumBytes, let copy = try? drop.duplicate() else { return false }
        do {
            try SystemThread.start(stackSize: 64 << 10) {
                _ = hashed()
                try? copy.dropCachedPages()
                copy.close()
            }
            return true
        } catch {
            copy.close()
            return false
        }
    }
}
