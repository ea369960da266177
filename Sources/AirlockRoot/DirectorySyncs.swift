import AirlockSystem
import Synchronization

/// Group commit for fsync(2) of a directory: workers that renamed or removed
/// entries of one directory close together share one fsync of it, the way
/// `SyncGroup` shares syncfs. An fsync of a directory makes every change to its
/// entries made before it starts durable, whichever descriptor of the directory
/// it goes through, so a worker waits for the first one that starts after its
/// call. Directories are told apart by device and inode, not by descriptor, so
/// two descriptors of one directory (a reload reopens the root) share a group
/// and two roots never do.
package final class DirectorySyncs: Sendable {
    package static let shared = DirectorySyncs()

    private struct Identity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// One group per directory synced so far: a handful per root.
    private let groups = Mutex<[Identity: SyncGroup]>([:])

    /// fsyncs `directory`, or waits for a peer's fsync of it that covers every
    /// change this thread made to it before the call.
    package func sync(_ directory: FileDescriptor) throws(SystemError) {
        let status = try directory.status()
        let identity = Identity(device: status.device, inode: status.inode)
        let group = groups.withLock { table in
            if let group = table[identity] { return group }
            let group = SyncGroup()
            table[identity] = group
            return group
        }
        try group.share { () throws(SystemError) in try directory.sync() }
    }
}
