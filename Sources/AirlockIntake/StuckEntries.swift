import AirlockEvents
import AirlockJournal
import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation
import Synchronization

/// Inbox entries airlock cannot move out of the inbox (another user's directory,
/// which cannot be renamed without write access to it; another user's file in a
/// sticky inbox airlock does not own). Each is reported once, in the log, as a
/// `skipped` event and in the journal, and then left alone: it never stops the
/// intake of the others. The journal remembers what was reported, so a later run
/// stays quiet about the same entry; an entry that changes (a chmod, a chown, a
/// replacement) is a new one and is tried again.
public final class StuckEntries: Sendable {
    /// One entry as it stands: its name and its inode with the inode's change time.
    struct Identity: Hashable, Sendable {
        let name: [UInt8]
        let device: UInt64
        let inode: UInt64
        let changed: String

        init(_ name: [UInt8], _ status: FileStatus) {
            self.name = name
            device = status.device
            inode = status.inode
            changed = "\(status.changed.tv_sec).\(status.changed.tv_nsec)"
        }

        init?(record: JournalEntry) {
            guard case .skipped(let skipped) = record.record, let name = [UInt8](hex: skipped.dropHex) else { return nil }
            self.name = name
            device = UInt64(bitPattern: skipped.device)
            inode = UInt64(bitPattern: skipped.inode)
            changed = skipped.changed
        }
    }

    private let journal: Journal
    /// What was reported, seeded from the journal on first use.
    private let reported = Mutex<Set<Identity>?>(nil)

    public init(journal: Journal) {
        self.journal = journal
    }

    /// Whether a claim failed because of the entry itself rather than the machine:
    /// the rename out of the inbox was refused for this entry. EACCES says that
    /// only for a directory (renaming one needs write access to it too); for
    /// anything else it means the inbox itself is not writable, a fault of the
    /// set-up that stops the intake as before.
    static func isUnmovable(_ error: SystemError, _ status: FileStatus) -> Bool {
        guard error.operation == "renameat" else { return false }
        if error.errno == .permissionDenied { return status.kind == .directory }
        return [Errno.notPermitted, .busy, .crossDevice].contains(error.errno)
    }

    /// True the first time `identity` is seen, in this process or in the journal.
    func isNew(_ identity: Identity) -> Bool {
        reported.withLock { set in
            if set == nil {
                set = Set((try? journal.records())?.compactMap(Identity.init(record:)) ?? [])
            }
            return set!.insert(identity).inserted
        }
    }
}
