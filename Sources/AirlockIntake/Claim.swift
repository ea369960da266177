import AirlockConfiguration
import AirlockEvents
import AirlockSystem

/// A claimed drop, by id and original name: what queues hold (no descriptor).
public struct ClaimTicket: Sendable, Hashable {
    public let id: String
    public let dropName: [UInt8]
    /// The drop as it was claimed; nil for a claim found again after a restart or
    /// retried after a deferral, which is judged from the moment it is opened.
    public let claimedAs: ClaimedDrop?

    public init(id: String, dropName: [UInt8], claimedAs: ClaimedDrop? = nil) {
        self.id = id
        self.dropName = dropName
        self.claimedAs = claimedAs
    }
}

/// The drop's identity, size and modification time, read from the inbox just
/// before the claim's rename. A rename keeps all of them (it changes only the
/// change time), so a later difference is a write that landed after the claim:
/// the bytes a decoder would see are no longer the bytes that were claimed.
public struct ClaimedDrop: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
        size = status.size
        modifiedSeconds = status.modified.tv_sec
        modifiedNanoseconds = status.modified.tv_nsec
    }

    /// Whether `status` is the same file with the same size and modification time.
    func matches(_ status: FileStatus) -> Bool {
        self == ClaimedDrop(status)
    }
}

/// A drop taken out of the inbox: `state/claimed/ID/` holds the drop as `drop` and
/// its original name in `name`. While it is claimed nobody else sees it; it leaves
/// by becoming an outbox entry (then the claim is removed) or by the whole
/// directory being renamed to `quarantine/ID`.
package struct Claim {
    static let dropFile: [UInt8] = Array("drop".utf8)
    static let nameFile: [UInt8] = Array("name".utf8)
    static let reportFile: [UInt8] = Array("report.json".utf8)
    static let reportTemporary: [UInt8] = Array("report.json.tmp".utf8)
    /// Written before the outbox rename: the inode of the staging directory being
    /// committed, so recovery can tell whether the commit happened.
    static let commitFile: [UInt8] = Array("commit".utf8)

    let id: String
    package let directory: FileDescriptor
    package let dropName: [UInt8]
    var claimedAs: ClaimedDrop? = nil

    var idBytes: [UInt8] { Array(id.utf8) }

    /// Whether `name` begins as a claim id does (`YYYYMMDDTHHMMSSZ-`).
    static func looksLikeID(_ name: [UInt8]) -> Bool {
        ClusterSettings.looksLikeClaimID(name)
    }

    /// A fresh id: UTC time to the second, then 32 random bits, then in a fleet the
    /// instance's name, so that ids (quarantine entries) stay unique across instances.
    static func newID(instance: String?) -> String {
        newID() + (instance.map { "-" + $0 } ?? "")
    }

    /// A fresh id: UTC time to the second, then 32 random bits.
    static func newID() -> String {
        let parts = WallClock.utc()
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let stamp = "\(parts.year)\(two(parts.month))\(two(parts.day))T\(two(parts.hour))\(two(parts.minute))\(two(parts.second))Z"
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        return stamp + "-" + String(repeating: "0", count: 8 - random.count) + random
    }

    /// Moves `name` out of the inbox into a new claim. Returns nil when the name
    /// vanished before the rename (a producer took it back).
    static func take(_ name: [UInt8], from inbox: FileDescriptor, into claimed: FileDescriptor,
                     instance: String? = nil) throws(SystemError) -> ClaimTicket? {
        var id = newID(instance: instance)
        while true {
            do {
                try claimed.makeDirectory(Array(id.utf8), mode: 0o700)
                break
            } catch where error.errno == .exists {
                id = newID(instance: instance)
            }
        }
        let owned = OwnedDescriptor(try claimed.openDirectory(Array(id.utf8)))
        let directory = owned.descriptor
        // Read before the rename: a write that lands after it then shows as a change,
        // however soon after the rename it comes. (An entry that is no longer there
        // is left to the rename to report.)
        let claimedAs = (try? inbox.status(of: name)).map(ClaimedDrop.init)
        do {
            // The name is written before the drop moves, so a claim holding a drop
            // always knows its name (after a power cut it may read empty: then the
            // id stands in for it).
            try directory.open(nameFile, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600).closeAfter { (fd) throws(SystemError) in
                try fd.writeAll(name)
            }
            try inbox.rename(name, to: directory, dropFile)
        } catch {
            try? directory.removeTree(nameFile)
            guard error.errno == .noEntry && error.operation == "renameat" else {
                owned.close()
                try? claimed.removeDirectory(Array(id.utf8))
                throw error
            }
            guard Claim.renameHappened(id, in: claimed) else { return nil }
            try directory.open(nameFile, [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600).closeAfter { (fd) throws(SystemError) in
                try fd.writeAll(name)
            }
        }
        return ClaimTicket(id: id, dropName: name, claimedAs: claimedAs)
    }

    /// After a rename into the claim `id` reported ENOENT: whether it happened after
    /// all. ENOENT is the loser's answer when another instance (or the producer)
    /// took the name first, but an NFS client that retries a rename whose reply was
    /// lost also reports ENOENT for a rename that succeeded. The empty claim
    /// directory is removed: if it is not empty, the drop is in it. The drop's own
    /// name is never looked up here: ceph-fuse 16.2 can hang for good on a lookup
    /// of a rename's target through the client that lost the rename.
    static func renameHappened(_ id: String, in claimed: FileDescriptor) -> Bool {
        do {
            try claimed.removeDirectory(Array(id.utf8))
            return false
        } catch {
            return error.errno == .notEmpty || error.errno == .exists
        }
    }

    /// Opens the claim a ticket names.
    static func open(_ ticket: ClaimTicket, in claimed: FileDescriptor) throws(SystemError) -> Claim {
        Claim(id: ticket.id, directory: try claimed.openDirectory(Array(ticket.id.utf8)), dropName: ticket.dropName,
              claimedAs: ticket.claimedAs)
    }

    var ticket: ClaimTicket { ClaimTicket(id: id, dropName: dropName, claimedAs: claimedAs) }

    /// Reopens a claim left by an earlier run.
    package static func reopen(id: [UInt8], in claimed: FileDescriptor) throws(SystemError) -> Claim {
        let directory = try claimed.openDirectory(id)
        var name: [UInt8] = []
        if let fd = try? directory.open(nameFile, [.readOnly, .noFollow]) {
            name = (try? fd.closeAfter { (fd) throws(SystemError) in try fd.readAll(limit: 4096) }) ?? []
        }
        let text = String(decoding: id, as: UTF8.self)
        if name.isEmpty || name.contains(0) || name.contains(UInt8(ascii: "/")) { name = id }
        return Claim(id: text, directory: directory, dropName: name)
    }

    /// changed-during-ingest when the opened drop is not the drop as it was claimed:
    /// what a decoder would read is then not what was handed over.
    func change(since opened: FileStatus) -> Rejection? {
        guard let claimedAs, !claimedAs.matches(opened) else { return nil }
        return Rejection(.changedDuringIngest, "the drop changed after it was claimed")
    }

    func has(_ file: [UInt8]) -> Bool {
        (try? directory.status(of: file)) != nil
    }
}
