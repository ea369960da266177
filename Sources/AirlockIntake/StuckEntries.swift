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

/// An attempt to take an inbox entry.
public enum ClaimAttempt: Sendable {
    case claimed(ClaimTicket)
    /// Gone before the rename (a producer took it back).
    case vanished
    /// It cannot be moved; reported once, left in the inbox.
    case stuck
}

extension Intake {
    /// Claims `name` out of `inbox`; an entry that cannot be moved is reported the
    /// first time (log, `skipped` event on standard output, journal) and left.
    ///
    /// - Throws: what the claim throws for any other reason (the machine's faults).
    public func claimOrReport(_ name: [UInt8], from inbox: FileDescriptor, stuck: StuckEntries) throws(SystemError) -> ClaimAttempt {
        do {
            guard let ticket = try claim(name, from: inbox) else { return .vanished }
            return .claimed(ticket)
        } catch {
            guard let status = try? inbox.status(of: name) else { return .vanished }
            guard StuckEntries.isUnmovable(error, status) else { throw error }
            let identity = StuckEntries.Identity(name, status)
            if stuck.isNew(identity) { reportStuck(identity, status, error) }
            return .stuck
        }
    }

    private func reportStuck(_ identity: StuckEntries.Identity, _ status: FileStatus, _ error: SystemError) {
        let shown = EscapedName(identity.name).text
        let mode = UnreadableDrop.octal(status.permissions)
        let kind = status.kind == .regular ? "file" : "\(status.kind)"
        let detail = "cannot be moved out of the inbox (\(error)); a \(kind) owned by uid \(status.owner), mode \(mode)"
        log.warning("skipping \(shown): \(detail); it stays in the inbox until it changes")
        journalAppend(.skipped(.init(drop: shown, dropHex: identity.name.hex, device: Int64(bitPattern: identity.device),
                                     inode: Int64(bitPattern: identity.inode), changed: identity.changed, detail: detail)))
        var event = JSONObjectWriter()
        event.add("event", "skipped")
        event.add("drop", shown)
        event.add("detail", detail)
        EventStream().emit(event.text)
    }
}
