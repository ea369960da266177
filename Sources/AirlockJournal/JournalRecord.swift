import AirlockPolicy

/// One record of the audit journal, one case per kind. `Key` names every field
/// once: each kind writes its fields in a fixed order after `time` and `event`,
/// and reads them back through the same keys (`JournalRecordCoding.swift`).
public enum JournalRecord: Sendable, Equatable {
    /// A drop was claimed from the inbox.
    case claimed(Claimed)
    case accepted(Accepted)
    case rejected(Rejected)
    /// The drop stays claimed and is tried again.
    case deferred(Deferred)
    /// An inbox entry that cannot be moved out of the inbox, reported once.
    case skipped(Skipped)
    /// An operator sent a quarantined drop back to the inbox.
    case released(Released)
    /// An operator removed a quarantine entry.
    case purged(Purged)

    /// The `event` field.
    public var event: String {
        switch self {
        case .claimed: return "claimed"
        case .accepted: return "accepted"
        case .rejected: return "rejected"
        case .deferred: return "deferred"
        case .skipped: return "skipped"
        case .released: return "released"
        case .purged: return "purged"
        }
    }

    /// The drop's id; nil for a skipped entry, which never got one.
    public var id: String? {
        switch self {
        case .claimed(let record): return record.drop.id
        case .accepted(let record): return record.drop.id
        case .rejected(let record): return record.drop.id
        case .deferred(let record): return record.drop.id
        case .skipped: return nil
        case .released(let record): return record.id
        case .purged(let record): return record.id
        }
    }

    /// The drop a verdict record is about, as it was claimed.
    public struct Drop: Sendable, Equatable {
        public var id: String
        /// The escaped name.
        public var drop: String
        public var size: Int64?
        public var sha256: String?

        public init(id: String, drop: String, size: Int64? = nil, sha256: String? = nil) {
            self.id = id
            self.drop = drop
            self.size = size
            self.sha256 = sha256
        }
    }

    /// How long a verdict took, and whether recovery wrote it after a stop.
    public struct Measures: Sendable, Equatable {
        public var durationMilliseconds: Int64?
        public var decoderMaxRSSKiB: Int64?
        public var recovered = false

        public init(durationMilliseconds: Int64? = nil, decoderMaxRSSKiB: Int64? = nil, recovered: Bool = false) {
            self.durationMilliseconds = durationMilliseconds
            self.decoderMaxRSSKiB = decoderMaxRSSKiB
            self.recovered = recovered
        }
    }

    public struct Claimed: Sendable, Equatable {
        public var drop: Drop
        public var uploaderUID: UInt32?
        public var uploader: String?

        package init(drop: Drop, uploaderUID: UInt32? = nil, uploader: String? = nil) {
            self.drop = drop
            self.uploaderUID = uploaderUID
            self.uploader = uploader
        }
    }

    public struct Accepted: Sendable, Equatable {
        public var drop: Drop
        /// `outbox/NAME`.
        public var output: String
        /// Absent when recovery found the commit but not its counts.
        public var files: Int64?
        public var bytes: Int64?
        /// Escaped entry name to MIME type, sorted by entry when read back.
        public var types: [DetectedType]?
        public var measures = Measures()

        package init(drop: Drop, output: String, files: Int64? = nil, bytes: Int64? = nil, types: [DetectedType]? = nil,
                     measures: Measures = Measures()) {
            self.drop = drop
            self.output = output
            self.files = files
            self.bytes = bytes
            self.types = types
            self.measures = measures
        }
    }

    public struct Rejected: Sendable, Equatable {
        public var drop: Drop
        public var reason: String
        public var entry: String?
        public var bytesWritten: Int64
        public var measures = Measures()

        package init(drop: Drop, reason: String, entry: String? = nil, bytesWritten: Int64,
                     measures: Measures = Measures()) {
            self.drop = drop
            self.reason = reason
            self.entry = entry
            self.bytesWritten = bytesWritten
            self.measures = measures
        }
    }

    public struct Deferred: Sendable, Equatable {
        public var drop: Drop
        public var detail: String
        public var measures = Measures()

        package init(drop: Drop, detail: String, measures: Measures = Measures()) {
            self.drop = drop
            self.detail = detail
            self.measures = measures
        }
    }

    public struct Skipped: Sendable, Equatable {
        /// The escaped name, and the raw name in hex.
        public var drop: String
        public var dropHex: String
        public var device: Int64
        public var inode: Int64
        /// The entry's ctime, `seconds.nanoseconds`.
        public var changed: String
        public var detail: String

        package init(drop: String, dropHex: String, device: Int64, inode: Int64, changed: String, detail: String) {
            self.drop = drop
            self.dropHex = dropHex
            self.device = device
            self.inode = inode
            self.changed = changed
            self.detail = detail
        }
    }

    public struct Released: Sendable, Equatable {
        public var id: String
        public var drop: String
        /// `inbox/NAME`.
        public var to: String
        public var sha256: String?
        public var size: Int64?
        /// The person who released it (see Analyst); absent when recovery finished it.
        public var by: String? = nil
        /// The operator's note, if given.
        public var releaseReason: String? = nil

        package init(id: String, drop: String, to: String, sha256: String? = nil, size: Int64? = nil,
                     by: String? = nil, releaseReason: String? = nil) {
            (self.id, self.drop, self.to, self.sha256, self.size) = (id, drop, to, sha256, size)
            (self.by, self.releaseReason) = (by, releaseReason)
        }
    }

    public struct Purged: Sendable, Equatable {
        public var id: String
        public var drop: String
        public var reason: String
        public var size: Int64?
        /// The operator's note, if given.
        public var purgeReason: String?
        /// The person who purged it (see Analyst); absent when recovery finished it.
        public var by: String? = nil

        package init(id: String, drop: String, reason: String, size: Int64? = nil, purgeReason: String? = nil, by: String? = nil) {
            (self.id, self.drop, self.reason, self.size, self.purgeReason, self.by) = (id, drop, reason, size, purgeReason, by)
        }
    }
}

/// A record as the journal holds it: when, and what.
public struct JournalEntry: Sendable, Equatable {
    public var time: String
    public var record: JournalRecord

    public init(time: String, record: JournalRecord) {
        self.time = time
        self.record = record
    }
}
