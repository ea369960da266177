import AirlockConfiguration
import AirlockIntake
import AirlockJournal
import AirlockPolicy
import AirlockQuarantine
import AirlockRoot
import AirlockSystem
import AirlockText
import Foundation

/// `airlock status`: is a daemon running on this root, what has it done, what is
/// waiting, how much room is left, and what confinement decoders get.
public struct Status {
    public struct Counts {
        public var accepted = 0
        public var rejected = 0
        public var deferred = 0
        public var byReason: [String: Int] = [:]

        mutating func add(_ outline: JournalOutline) {
            switch outline.event {
            case "accepted": accepted += 1
            case "rejected":
                rejected += 1
                byReason[outline.reason ?? "", default: 0] += 1
            case "deferred": deferred += 1
            default: break
            }
        }

        public var summary: String {
            var text = "\(accepted) accepted, \(rejected) rejected, \(deferred) deferred"
            if !byReason.isEmpty {
                text += " (" + byReason.keys.sorted().map { "\($0) \(byReason[$0]!)" }.joined(separator: ", ") + ")"
            }
            return text
        }
    }

    public var holder: RunLock.Holder
    /// A fleet's instances (none for a single daemon's root).
    public var instances: [(record: InstanceRecord, running: Bool)] = []
    public var total = Counts()
    public var sinceStart: Counts?
    public var claimed = 0
    public var waiting = 0
    public var oldestWaiting: (name: String, seconds: Int64)?
    /// Inbox entries airlock reported it cannot move, still there as they were.
    public var stuck: [(name: String, detail: String, since: String)] = []
    public var freeBytes: UInt64 = 0
    /// Claims older than a decoder's time limit, and the quarantine's size.
    public var longClaims: [LongClaim] = []
    public var quarantine = RootGauges()
    /// How far `airlock publish` is behind the journal; nil without publish.nats.
    public var publish: PublishLag?

    public static func gather(_ layout: RootLayout, configuration: Configuration) throws(SystemError) -> Status {
        var status = Status(holder: RunLock.holder(layout))
        let journal = Journal(layout, configuration)
        let started = status.holder.running ? status.holder.startedAt : nil
        if started != nil { status.sinceStart = Counts() }
        var skipped: [[UInt8]: (record: JournalRecord.Skipped, time: String)] = [:]
        for outline in try journal.outlines(fully: ["skipped"]) {
            if let entry = outline.entry, case .skipped(let record) = entry.record, let name = [UInt8](hex: record.dropHex) {
                skipped[name] = (record, entry.time)
            }
            status.total.add(outline)
            if let started, outline.time >= started { status.sinceStart?.add(outline) }
        }
        var claimed = 0
        try layout.eachClaim { _, _ in claimed += 1 }
        status.claimed = claimed
        status.instances = layout.instances()
        if let opened = try layout.openInbox() {
            let owned = OwnedDescriptor(opened), inbox = owned.descriptor
            defer { withExtendedLifetime(owned) {} }
            let now = WallClock.seconds()
            for name in try inbox.entryNames() where !Intake.isTemporaryName(name, configuration) {
                status.waiting += 1
                guard let entry = try? inbox.status(of: name) else { continue }
                if let seen = skipped[name], seen.record.inode == Int64(bitPattern: entry.inode) {
                    status.stuck.append((EscapedName(name).text, seen.record.detail, seen.time))
                }
                let age = now - entry.modifiedSeconds
                if status.oldestWaiting == nil || age > status.oldestWaiting!.seconds {
                    status.oldestWaiting = (EscapedName(name).text, age)
                }
            }
        }
        status.freeBytes = try layout.root.availableBytes()
        status.longClaims = try longClaims(layout, olderThan: configuration.decoderTimeoutSeconds)
        // The quarantine's size from its index (checked against the quarantine as it
        // is read), not a walk of every entry; the walk only where the index fails.
        status.quarantine = try RootGauges.measure(layout, configuration,
                                                   quarantine: try? QuarantineDesk(layout: layout, configuration: configuration).totals())
        status.publish = PublishLag.measure(layout, configuration)
        return status
    }
}
