import AirlockSystem
import Foundation

/// Group commit for syncfs(2): workers whose staging completes close together
/// share one sync instead of queueing one each behind the disk.
///
/// A worker takes a ticket once its writes are done. A sync that starts after
/// the ticket was taken covers those writes (syncfs flushes the whole
/// filesystem), so the worker waits for the first sync that *starts* after its
/// ticket: either it runs that sync itself, or it waits for the one a peer
/// started, which covers every ticket taken before it began. Each drop is still
/// renamed only after a sync that covers it. A sync that fails covers nothing:
/// its leader throws, and each waiter then runs a sync of its own, so every
/// drop sees its own error and is retried like any failed commit.
///
/// One group serves the whole process: the staging directories all live on the
/// root's filesystem, and a reload replaces the intake, not the disk.
public final class SyncGroup: @unchecked Sendable {  // all state under `condition`
    public static let shared = SyncGroup()

    private let condition = NSCondition()
    /// Tickets handed out so far.
    private var taken: UInt64 = 0
    /// Every ticket up to this one is covered by a finished sync.
    private var covered: UInt64 = 0
    private var syncing = false
    private var started: UInt64 = 0

    /// syncfs calls made so far: fewer than the calls to `sync` when grouped.
    public var syncs: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    public init() {}

    /// Syncs the filesystem holding `fd`, or waits for a peer's sync that covers
    /// every write this thread finished before the call.
    public func sync(_ fd: FileDescriptor) throws(SystemError) {
        try share { () throws(SystemError) in try fd.syncFilesystem() }
    }

    /// Runs `operation`, or waits for a peer's run of its own that started after
    /// this call. Every caller of one group passes an operation that covers the
    /// same writes: the writes to one filesystem, or to one directory.
    func share(_ operation: () throws(SystemError) -> Void) throws(SystemError) {
        condition.lock()
        taken += 1
        let ticket = taken
        while covered < ticket {
            if syncing {
                condition.wait()
                continue
            }
            syncing = true
            let through = taken
            started += 1
            condition.unlock()
            let result = Result { () throws(SystemError) in try operation() }
            condition.lock()
            syncing = false
            if case .success = result { covered = max(covered, through) }
            condition.broadcast()
            if case .failure(let failure) = result {
                condition.unlock()
                throw failure
            }
        }
        condition.unlock()
    }
}
