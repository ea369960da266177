import Foundation
import Testing

/// quarantine/ID/report.json, and `quarantine show --json` (the report with
/// `holds_drop`), decoded strictly like `Event`.
struct Report: Decodable, Equatable {
    struct PolicyInForce: Decodable, Equatable {
        let maxEntries: Int
        let maxFileBytes: Int64
        let maxTotalBytes: Int64
        let maxDropBytes: Int64
        let maxComponentBytes: Int
        let maxPathBytes: Int
        let maxDepth: Int
        let maxRatio: Int64
        let ratioMinBytes: Int64
        let fileMode: String

        enum CodingKeys: String, CodingKey, CaseIterable {
            case maxEntries = "max_entries", maxFileBytes = "max_file_bytes", maxTotalBytes = "max_total_bytes"
            case maxDropBytes = "max_drop_bytes", maxComponentBytes = "max_component_bytes", maxPathBytes = "max_path_bytes"
            case maxDepth = "max_depth", maxRatio = "max_ratio", ratioMinBytes = "ratio_min_bytes", fileMode = "file_mode"
        }

        init(from decoder: any Decoder) throws {
            let fields = try StrictKeys.container(CodingKeys.self, decoder)
            maxEntries = try fields.decode(Int.self, forKey: .maxEntries)
            maxFileBytes = try fields.decode(Int64.self, forKey: .maxFileBytes)
            maxTotalBytes = try fields.decode(Int64.self, forKey: .maxTotalBytes)
            maxDropBytes = try fields.decode(Int64.self, forKey: .maxDropBytes)
            maxComponentBytes = try fields.decode(Int.self, forKey: .maxComponentBytes)
            maxPathBytes = try fields.decode(Int.self, forKey: .maxPathBytes)
            maxDepth = try fields.decode(Int.self, forKey: .maxDepth)
            maxRatio = try fields.decode(Int64.self, forKey: .maxRatio)
            ratioMinBytes = try fields.decode(Int64.self, forKey: .ratioMinBytes)
            fileMode = try fields.decode(String.self, forKey: .fileMode)
        }
    }

    /// What an operator did to the entry after the verdict.
    struct HistoryEntry: Decodable, Equatable {
        let action: String
        let at: String
        let to: String?
        let by: String?

        enum CodingKeys: String, CodingKey, CaseIterable { case action, at, to, by }

        init(from decoder: any Decoder) throws {
            let fields = try StrictKeys.container(CodingKeys.self, decoder)
            action = try fields.decode(String.self, forKey: .action)
            at = try fields.decode(String.self, forKey: .at)
            to = try fields.decodeIfPresent(String.self, forKey: .to)
            by = try fields.decodeIfPresent(String.self, forKey: .by)
        }
    }

    let id: String
    let drop: String
    let dropHex: String
    let size: Int64?
    /// The size in reports written before the field took the events' name.
    let dropBytes: Int64?
    let sha256: String?
    let uploaderUID: UInt32?
    let uploader: String?
    let format: String?
    let reason: String
    let detail: String
    let entry: String?
    let entryIndex: Int?
    let otherEntry: String?
    let bytesWritten: Int64
    let policy: PolicyInForce
    let receivedAt: String
    let decidedAt: String
    let airlockVersion: String
    let types: [String: String]?
    let history: [HistoryEntry]?
    /// Only from `quarantine show --json`.
    let holdsDrop: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, drop, size, sha256, uploader, format, reason, detail, entry, policy, types, history
        case dropHex = "drop_hex", dropBytes = "drop_bytes", uploaderUID = "uploader_uid", entryIndex = "entry_index"
        case otherEntry = "other_entry", bytesWritten = "bytes_written", receivedAt = "received_at", decidedAt = "decided_at"
        case airlockVersion = "airlock_version", holdsDrop = "holds_drop"
    }

    init(from decoder: any Decoder) throws {
        let fields = try StrictKeys.container(CodingKeys.self, decoder)
        id = try fields.decode(String.self, forKey: .id)
        drop = try fields.decode(String.self, forKey: .drop)
        dropHex = try fields.decode(String.self, forKey: .dropHex)
        size = try fields.decodeIfPresent(Int64.self, forKey: .size)
        dropBytes = try fields.decodeIfPresent(Int64.self, forKey: .dropBytes)
        sha256 = try fields.decodeIfPresent(String.self, forKey: .sha256)
        uploaderUID = try fields.decodeIfPresent(UInt32.self, forKey: .uploaderUID)
        uploader = try fields.decodeIfPresent(String.self, forKey: .uploader)
        format = try fields.decodeIfPresent(String.self, forKey: .format)
        reason = try fields.decode(String.self, forKey: .reason)
        detail = try fields.decode(String.self, forKey: .detail)
        entry = try fields.decodeIfPresent(String.self, forKey: .entry)
        entryIndex = try fields.decodeIfPresent(Int.self, forKey: .entryIndex)
        otherEntry = try fields.decodeIfPresent(String.self, forKey: .otherEntry)
        bytesWritten = try fields.decode(Int64.self, forKey: .bytesWritten)
        policy = try fields.decode(PolicyInForce.self, forKey: .policy)
        receivedAt = try fields.decode(String.self, forKey: .receivedAt)
        decidedAt = try fields.decode(String.self, forKey: .decidedAt)
        airlockVersion = try fields.decode(String.self, forKey: .airlockVersion)
        types = try fields.decodeIfPresent([String: String].self, forKey: .types)
        history = try fields.decodeIfPresent([HistoryEntry].self, forKey: .history)
        holdsDrop = try fields.decodeIfPresent(Bool.self, forKey: .holdsDrop)
    }

    /// Reads a report file.
    static func read(_ url: URL) throws -> Report {
        try JSONDecoder().decode(Report.self, from: Data(contentsOf: url))
    }
}

/// `.airlock:manifest.json` of an outbox entry, decoded strictly.
struct Manifest: Decodable, Equatable {
    struct File: Decodable, Equatable {
        let entry: String
        let entrySize: Int64
        let sha256: String?
        let classes: [String]
        /// Only where libmagic ran.
        let mimeType: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case entry, sha256, classes
            case entrySize = "entry_size", mimeType = "mime_type"
        }

        init(from decoder: any Decoder) throws {
            let fields = try StrictKeys.container(CodingKeys.self, decoder)
            entry = try fields.decode(String.self, forKey: .entry)
            entrySize = try fields.decode(Int64.self, forKey: .entrySize)
            sha256 = try fields.decodeIfPresent(String.self, forKey: .sha256)
            classes = try fields.decode([String].self, forKey: .classes)
            mimeType = try fields.decodeIfPresent(String.self, forKey: .mimeType)
        }
    }

    let manifestVersion: Int
    let time: String
    let id: String
    let drop: String
    let format: String
    let size: Int64?
    let sha256: String?
    let uploaderUID: UInt32?
    let uploader: String?
    let outboxFiles: [File]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case time, id, drop, format, size, sha256, uploader
        case manifestVersion = "manifest_version", uploaderUID = "uploader_uid", outboxFiles = "outbox_files"
    }

    init(from decoder: any Decoder) throws {
        let fields = try StrictKeys.container(CodingKeys.self, decoder)
        manifestVersion = try fields.decode(Int.self, forKey: .manifestVersion)
        time = try fields.decode(String.self, forKey: .time)
        id = try fields.decode(String.self, forKey: .id)
        drop = try fields.decode(String.self, forKey: .drop)
        format = try fields.decode(String.self, forKey: .format)
        size = try fields.decodeIfPresent(Int64.self, forKey: .size)
        sha256 = try fields.decodeIfPresent(String.self, forKey: .sha256)
        uploaderUID = try fields.decodeIfPresent(UInt32.self, forKey: .uploaderUID)
        uploader = try fields.decodeIfPresent(String.self, forKey: .uploader)
        outboxFiles = try fields.decode([File].self, forKey: .outboxFiles)
    }

    /// The manifest of the outbox entry `entry`.
    static func read(in entry: URL) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: entry.appendingPathComponent(manifestName)))
    }
}

/// One line of `quarantine list --json`.
struct QuarantineListing: Decodable, Equatable {
    let id: String
    let decidedAt: String
    let drop: String
    let size: Int64?
    let reason: String
    let entry: String?
    let uploader: String?
    let released: Bool

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, drop, size, reason, entry, uploader, released
        case decidedAt = "decided_at"
    }

    init(from decoder: any Decoder) throws {
        let fields = try StrictKeys.container(CodingKeys.self, decoder)
        id = try fields.decode(String.self, forKey: .id)
        decidedAt = try fields.decode(String.self, forKey: .decidedAt)
        drop = try fields.decode(String.self, forKey: .drop)
        size = try fields.decodeIfPresent(Int64.self, forKey: .size)
        reason = try fields.decode(String.self, forKey: .reason)
        entry = try fields.decodeIfPresent(String.self, forKey: .entry)
        uploader = try fields.decodeIfPresent(String.self, forKey: .uploader)
        released = try fields.decode(Bool.self, forKey: .released)
    }
}

extension StrictKeys {
    /// The keyed container of `decoder`, after checking that it holds only keys `keys` names.
    static func container<K: CodingKey & CaseIterable>(_ keys: K.Type, _ decoder: any Decoder) throws -> KeyedDecodingContainer<K> {
        let present = try decoder.container(keyedBy: StrictKeys.self).allKeys.map(\.stringValue)
        let known = Set(K.allCases.map(\.stringValue))
        let unknown = present.filter { !known.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no key \(unknown) in \(K.self)"))
        }
        return try decoder.container(keyedBy: K.self)
    }
}

/// `status --json`: the fields the tests read, each with its type (a field of
/// another JSON type fails the decoding); the whole document's names and types
/// are SchemaTests' to check against docs/schema.json.
struct StatusDocument: Decodable {
    struct Daemon: Decodable {
        let running: Bool
        let pid: Int?
    }

    struct Counts: Decodable {
        let accepted: Int
        let rejected: Int
        let deferred: Int
    }

    struct Quarantine: Decodable {
        let entries: Int64
        let bytes: Int64
    }

    struct Stuck: Decodable {
        let drop: String
        let detail: String
    }

    struct LongClaim: Decodable {
        let id: String
        let drop: String
        let ageSeconds: Int64

        enum CodingKeys: String, CodingKey { case id, drop, ageSeconds = "age_seconds" }
    }

    struct Confinement: Decodable {
        let landlockState: String
        let seccompState: String

        enum CodingKeys: String, CodingKey { case landlockState = "landlock_state", seccompState = "seccomp_state" }
    }

    struct Publish: Decodable {
        let lagRecords: Int

        enum CodingKeys: String, CodingKey { case lagRecords = "lag_records" }
    }

    let daemon: Daemon
    let totals: Counts
    let sinceStart: Counts?
    let freeBytes: UInt64
    let quarantine: Quarantine
    let stuck: [Stuck]
    let longClaims: [LongClaim]
    let confinement: Confinement?
    let publish: Publish?

    enum CodingKeys: String, CodingKey {
        case daemon, totals, quarantine, stuck, confinement, publish
        case sinceStart = "since_start", freeBytes = "free_bytes", longClaims = "long_claims"
    }
}

/// `doctor --json`, and state/decoder-confinement (the daemon's record of the same
/// states): the fields the tests read, each with its type.
struct DoctorDocument: Decodable {
    let landlockABI: Int?
    let landlock: Bool?
    let seccomp: Bool?
    let landlockState: String
    let seccompState: String
    let problems: String?
    let limitFileSizeBytes: Int64?
    let decodersWithheld: Bool?

    enum CodingKeys: String, CodingKey {
        case landlock, seccomp, problems
        case decodersWithheld = "decoders_withheld"
        case landlockABI = "landlock_abi", landlockState = "landlock_state", seccompState = "seccomp_state"
        case limitFileSizeBytes = "limit_file_size_bytes"
    }

    var bothInForce: Bool { landlockState == "in-force" && seccompState == "in-force" }
}

/// One line of `quarantine contents --json`: an entry of the quarantined archive.
struct ContentsEntry: Decodable, Equatable {
    let entry: String
    let entryType: String
    let entrySize: Int64?
    let linkTarget: String?
    let encrypted: Bool?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case entry, encrypted
        case entryType = "entry_type", entrySize = "entry_size", linkTarget = "link_target"
    }

    init(from decoder: any Decoder) throws {
        let fields = try StrictKeys.container(CodingKeys.self, decoder)
        entry = try fields.decode(String.self, forKey: .entry)
        entryType = try fields.decode(String.self, forKey: .entryType)
        entrySize = try fields.decodeIfPresent(Int64.self, forKey: .entrySize)
        linkTarget = try fields.decodeIfPresent(String.self, forKey: .linkTarget)
        encrypted = try fields.decodeIfPresent(Bool.self, forKey: .encrypted)
    }

    /// The text fields by their JSON names, to compare with a table of expected ones.
    var texts: [String: String] {
        var texts = ["entry": entry, "entry_type": entryType]
        if let linkTarget { texts["link_target"] = linkTarget }
        return texts
    }
}

/// receipts/UID/ID.json: what an uploader may learn of its drop, and nothing more.
struct Receipt: Decodable, Equatable {
    let receiptVersion: Int
    let id: String
    let drop: String
    let time: String
    let event: Event.Kind
    let reason: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, drop, time, event, reason
        case receiptVersion = "receipt_version"
    }

    init(from decoder: any Decoder) throws {
        let fields = try StrictKeys.container(CodingKeys.self, decoder)
        receiptVersion = try fields.decode(Int.self, forKey: .receiptVersion)
        id = try fields.decode(String.self, forKey: .id)
        drop = try fields.decode(String.self, forKey: .drop)
        time = try fields.decode(String.self, forKey: .time)
        event = try fields.decode(Event.Kind.self, forKey: .event)
        reason = try fields.decodeIfPresent(String.self, forKey: .reason)
    }
}

/// One line of `history --per-hour --json`: how many outcomes of a kind (and reason) in an hour.
struct HourlyCount: Decodable, Equatable {
    let count: Int
    let event: Event.Kind
    let hour: String
    let reason: String?

    enum CodingKeys: String, CodingKey, CaseIterable { case count, event, hour, reason }

    init(from decoder: any Decoder) throws {
        let fields = try StrictKeys.container(CodingKeys.self, decoder)
        count = try fields.decode(Int.self, forKey: .count)
        event = try fields.decode(Event.Kind.self, forKey: .event)
        hour = try fields.decode(String.self, forKey: .hour)
        reason = try fields.decodeIfPresent(String.self, forKey: .reason)
    }
}
