import AirlockEvents
import AirlockSystem

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
public final class SyncGroup: Sendable {
    public static let shared = SyncGroup()

    private struct Progress: Sendable {
        /// Tickets handed out so far.
        var taken: UInt64 = 0
        /// Every ticket up to this one is covered by a finished sync.
        var covered: UInt64 = 0
        var syncing = false
        var started: UInt64 = 0
    }

    private let progress = Monitor(Progress())

    /// syncfs calls made so far: fewer than the calls to `sync` when grouped.
    public var syncs: UInt64 {
        progress.read { $0.started }
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
        // Waiters wait for a run to end: taking a ticket, or starting a run, ends no
        // wait and wakes nobody; only a run's end wakes them all.
        let ticket = progress.withLock(waking: .none) { progress in
            progress.taken += 1
            return progress.taken
        }
        while true {
            // Covered already, or nobody running: then this thread leads the next run,
            // which covers every ticket taken so far.
            let leading: UInt64? = progress.withLock(when: { $0.covered >= ticket || !$0.syncing }, waking: .none) { progress, _ in
                guard progress.covered < ticket else { return nil }
                progress.syncing = true
                progress.started += 1
                return progress.taken
            }
            guard let through = leading else { return }
            let result = Result { () throws(SystemError) in try operation() }
            progress.withLock { progress in
                progress.syncing = false
                if case .success = result { progress.covered = max(progress.covered, through) }
            }
            try result.get()
        }
    }
}
