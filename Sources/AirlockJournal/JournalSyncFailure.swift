import AirlockSystem
import Synchronization

/// Remembers the first fsync of the journal (its file or its directory) that
/// failed in this process, after which the journal is neither written nor
/// consulted again until airlock restarts.
///
/// A failed fsync may leave lines the kernel could not write still readable in
/// the page cache, marked clean: a later fsync returns 0 without writing them,
/// and a read finds them. A retry that looked for its record, found it there
/// and went on (removing the claim, say) would take a lost record for a durable
/// one. So once an fsync has failed, every append and every look-up throws: the
/// drops they served stay claimed, as deferred, and are settled by the next
/// start, once the disk is sound. Reading the journal for display is not
/// affected.
final class JournalSyncFailure: Sendable {
    private let first = Mutex<SystemError?>(nil)

    /// Keeps `error` unless an earlier failure is kept already.
    func record(_ error: SystemError) {
        first.withLock { kept in
            if kept == nil { kept = error }
        }
    }

    /// Throws while an fsync failure is kept, naming it.
    func check() throws(SystemError) {
        guard let error = first.withLock({ $0 }) else { return }
        throw SystemError("the journal is not trusted since its fsync failed (\(error)); restart airlock once the disk is sound",
                          Journal.current, .ioError)
    }
}
