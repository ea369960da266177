import AirlockEvents
import AirlockPolicy
import AirlockSystem
import AirlockText
import Dispatch
import Synchronization

/// `receipts.*`: whether producers get a receipt for each drop, and for how long.
public struct ReceiptSettings: Sendable, Equatable {
    public var enabled = false
    public var maxAgeSeconds: Int64 = 7 * 86_400
}

/// Receipts for producers: for each decided drop, `receipts/UID/ID.json` holding
/// the drop's name, when it was decided, `accepted` or `rejected` and the reason
/// code, and nothing of the decision's internals (no detail, entry, output or
/// hash), readable by its uploader alone.
///
/// `receipts/` is 0711 (anyone may pass, nobody but airlock may list it);
/// `receipts/UID/` is 0700 with an ACL granting that uid r-x, and a default ACL
/// that gives each receipt r-- for that uid and nothing for the group or others,
/// whatever the umask. A directory per uid is what an SFTP chroot can bind-mount
/// for its user. Receipts are written (temporary file, fsync, rename, directory
/// fsync) on a queue of their own, so the intake never waits for them, and a
/// failure is logged, never a reason to defer a drop; they are removed once older
/// than `receipts.max_age_seconds`, at each start and then at most once a minute
/// while receipts are issued or the daemon's rescan timer fires.
public final class Receipts: Sendable {
    static let directoryName: [UInt8] = Array("receipts".utf8)
    static let version: Int64 = 1

    let root: FileDescriptor
    let settings: ReceiptSettings
    let log: Log
    let queue = DispatchQueue(label: "airlock.receipts")
    let lastExpiry = Mutex<Int64>(0)

    public init(root: FileDescriptor, settings: ReceiptSettings, log: Log) {
        self.root = root
        self.settings = settings
        self.log = log
    }

    /// The receipt of `outcome`, or nil for one that is not final (deferred) or has no uploader.
    static func document(_ outcome: DropOutcome) -> [UInt8]? {
        var json = JSONObjectWriter()
        json.add("receipt_version", version)
        json.add("id", outcome.id)
        json.add("drop", EscapedName(outcome.dropName).text)
        json.add("time", outcome.time)
        switch outcome.verdict {
        case .accepted:
            json.add("event", "accepted")
        case .rejected(let rejection):
            json.add("event", "rejected")
            json.add("reason", rejection.reason.rawValue)
        case .deferred:
            return nil
        }
        return Array((json.text + "\n").utf8)
    }

    /// Queues the receipt of a decided drop; returns at once.
    public func issue(_ outcome: DropOutcome) {
        guard settings.enabled, let uid = outcome.uploader?.uid, let bytes = Receipts.document(outcome) else { return }
        let id = outcome.id
        queue.async { [self] in
            do {
                try write(bytes, id: id, uid: uid)
            } catch {
                log.warning("cannot write the receipt of \(id) for uid \(uid): \(error)")
            }
            expireIfDue()
        }
    }

    /// Queues the removal of expired receipts unless one ran in the last minute.
    public func expireIfDue() {
        guard settings.enabled else { return }
        let now = WallClock.seconds()
        let due = lastExpiry.withLock { last in
            guard now - last >= 60 else { return false }
            last = now
            return true
        }
        guard due else { return }
        queue.async { [self] in
            do {
                let removed = try expire(olderThan: now - settings.maxAgeSeconds)
                if removed > 0 { log.info("removed \(removed) receipt\(removed == 1 ? "" : "s") older than receipts.max_age_seconds") }
            } catch {
                log.warning("cannot remove expired receipts: \(error)")
            }
        }
    }

    /// Waits until every queued receipt is written (before the process exits).
    public func finish() { queue.sync {} }

    private func write(_ bytes: [UInt8], id: String, uid: UInt32) throws(SystemError) {
        let top = try Receipts.openOrMake(root, Receipts.directoryName, mode: 0o711)
        defer { top.close() }
        let mine = try Receipts.openOrMake(top, Array(String(uid).utf8), mode: 0o700)
        defer { mine.close() }
        // Set again on every receipt: a directory made just before a stop, or
        // changed by hand, gets its grant back.
        try mine.setAccessControl(UserGrant(owner: 0o7, user: uid, rights: 0o5))
        try mine.setAccessControl(UserGrant(owner: 0o6, user: uid, rights: 0o4), inherited: true)
        try mine.replaceAtomically(Array("\(id).json".utf8), with: bytes, temporary: Array(".\(id).json.tmp".utf8),
                                   AtomicWriteOptions(mode: 0o640, ignoresUmask: true))
    }

    static func openOrMake(_ parent: FileDescriptor, _ name: [UInt8], mode: FileMode) throws(SystemError) -> FileDescriptor {
        do {
            try parent.makeDirectory(name, mode: mode)
            let made = try parent.openDirectory(name)
            try made.changeMode(mode)
            return made
        } catch where error.errno == .exists {
            return try parent.openDirectory(name)
        }
    }

    /// Removes every receipt (and temporary file a stop left) last changed before
    /// `cutoff` (seconds since the epoch); the per-uid directories stay, since an
    /// SFTP chroot may have them mounted. Returns how many it removed.
    func expire(olderThan cutoff: Int64) throws(SystemError) -> Int {
        let top: FileDescriptor
        do {
            top = try root.openDirectory(Receipts.directoryName)
        } catch where error.errno == .noEntry {
            return 0
        }
        defer { top.close() }
        var removed = 0
        for name in try top.entryNames() where !name.isEmpty && name.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let directory = try? top.openDirectory(name) else { continue }
            defer { directory.close() }
            for file in try directory.entryNames() {
                guard let status = try? directory.status(of: file), status.kind == .regular,
                      Int64(status.modified.tv_sec) < cutoff else { continue }
                try directory.unlink(file)
                removed += 1
            }
        }
        return removed
    }
}
