import AirlockEvents
import AirlockJournal
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import AirlockText

/// An attempt to take an inbox entry.
public enum ClaimAttempt: Sendable {
    case claimed(ClaimTicket)
    /// Gone before the rename (a producer took it back).
    case vanished
    /// It cannot be moved; reported once, left in the inbox.
    case stuck
}

/// Takes drops out of the inbox into claims, and reports once each entry that
/// cannot be moved.
struct InboxClaims: Sendable {
    let layout: RootLayout
    let log: Log
    let journal: Journal

    /// Moves `name` out of `inbox` into a new claim; nil when it vanished first.
    func claim(_ name: [UInt8], from inbox: FileDescriptor) throws(SystemError) -> ClaimTicket? {
        try Claim.take(name, from: inbox, into: layout.claimed, instance: layout.instance)
    }

    /// Claims `name` out of `inbox`; an entry that cannot be moved is reported the
    /// first time (log, `skipped` event on standard output, journal) and left.
    ///
    /// - Throws: what the claim throws for any other reason (the machine's faults).
    func claimOrReport(_ name: [UInt8], from inbox: FileDescriptor, stuck: StuckEntries) throws(SystemError) -> ClaimAttempt {
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
        journal.appendLogging(.skipped(.init(drop: shown, dropHex: identity.name.hex, device: Int64(bitPattern: identity.device),
                                             inode: Int64(bitPattern: identity.inode), changed: identity.changed, detail: detail)), log)
        var event = JSONObjectWriter()
        event.add("event", "skipped")
        event.add("drop", shown)
        event.add("detail", detail)
        EventStream().emit(event.text)
    }
}
