import AirlockPolicy
import Foundation

/// quarantine/ID/report.json: the one definition of its fields. The intake writes
/// it; `quarantine list`, `show`, `release`, `purge` and recovery read it back
/// through the same type, and `release` rewrites it with its history.
public struct RejectionReport: Codable, Sendable, Equatable {
    public struct PolicyInForce: Codable, Sendable, Equatable {
        public let max_entries: Int
        public let max_file_bytes: Int64
        public let max_total_bytes: Int64
        public let max_drop_bytes: Int64
        public let max_component_bytes: Int
        public let max_path_bytes: Int
        public let max_depth: Int
        public let max_ratio: Int64
        public let ratio_min_bytes: Int64
        public let file_mode: String

        package init(_ policy: Policy) {
            max_entries = policy.maxEntries
            max_file_bytes = policy.maxFileBytes
            max_total_bytes = policy.maxTotalBytes
            max_drop_bytes = policy.maxDropBytes
            max_component_bytes = policy.maxComponentBytes
            max_path_bytes = policy.maxPathBytes
            max_depth = policy.maxDepth
            max_ratio = policy.maxRatio
            ratio_min_bytes = policy.ratioMinBytes
            file_mode = policy.privateModes ? "0600" : "0644"
        }

        /// `key=value` pairs in key order, for `quarantine show`.
        public var text: String {
            [("file_mode", file_mode), ("max_component_bytes", "\(max_component_bytes)"), ("max_depth", "\(max_depth)"),
             ("max_drop_bytes", "\(max_drop_bytes)"), ("max_entries", "\(max_entries)"), ("max_file_bytes", "\(max_file_bytes)"),
             ("max_path_bytes", "\(max_path_bytes)"), ("max_ratio", "\(max_ratio)"), ("max_total_bytes", "\(max_total_bytes)"),
             ("ratio_min_bytes", "\(ratio_min_bytes)")].map { "\($0.0)=\($0.1)" }.joined(separator: " ")
        }
    }

    /// What an operator did to the entry after the verdict.
    public struct HistoryEvent: Codable, Sendable, Equatable {
        /// "released".
        public let action: String
        public let at: String
        /// Where the drop went, relative to the root.
        public let to: String?
        /// Who did it (see Analyst); absent in older reports and after recovery.
        public let by: String?

        public init(action: String, at: String, to: String?, by: String? = nil) {
            self.action = action
            self.at = at
            self.to = to
            self.by = by
        }
    }

    public let id: String
    public let drop: String
    /// The drop's name as raw bytes in hex, so `quarantine release` can restore it exactly.
    public let drop_hex: String
    public let size: Int64?
    /// The drop's size in reports written before the field took the events' name.
    public var drop_bytes: Int64?
    public let sha256: String?
    public let uploader_uid: UInt32?
    public let uploader: String?
    public let format: String?
    public let reason: String
    public let detail: String
    public let entry: String?
    public let entry_index: Int?
    public let other_entry: String?
    public let bytes_written: Int64
    public let policy: PolicyInForce
    public let received_at: String
    public let decided_at: String
    public let airlock_version: String
    /// Each file's detected type, as far as the decoder got.
    public var types: [String: String]?
    /// Releases, oldest first; absent until the first.
    public var history: [HistoryEvent]?

    /// Every field, as the intake fills them in when it decides a rejection.
    package init(id: String, drop: String, drop_hex: String, size: Int64?, drop_bytes: Int64? = nil, sha256: String?,
                 uploader_uid: UInt32?, uploader: String?, format: String?, reason: String, detail: String, entry: String?,
                 entry_index: Int?, other_entry: String?, bytes_written: Int64, policy: PolicyInForce, received_at: String,
                 decided_at: String, airlock_version: String, types: [String: String]? = nil, history: [HistoryEvent]? = nil) {
        self.id = id
        self.drop = drop
        self.drop_hex = drop_hex
        self.size = size
        self.drop_bytes = drop_bytes
        self.sha256 = sha256
        self.uploader_uid = uploader_uid
        self.uploader = uploader
        self.format = format
        self.reason = reason
        self.detail = detail
        self.entry = entry
        self.entry_index = entry_index
        self.other_entry = other_entry
        self.bytes_written = bytes_written
        self.policy = policy
        self.received_at = received_at
        self.decided_at = decided_at
        self.airlock_version = airlock_version
        self.types = types
        self.history = history
    }

    /// The drop's size, under either name.
    public var dropSize: Int64? { size ?? drop_bytes }

    /// When it was released, if it was.
    public var releasedAt: String? { history?.first { $0.action == "released" }?.at }

    /// The report as written to disk: indented, keys sorted, a final newline.
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// A report file's bytes; throws for anything that is not a whole report.
    static func decode(_ bytes: [UInt8]) throws -> RejectionReport {
        try JSONDecoder().decode(RejectionReport.self, from: Data(bytes))
    }

    /// The report on one line, keys sorted, with `holds_drop` added: `quarantine show --json`.
    public func line(holdsDrop: Bool) -> String {
        struct Shown: Encodable {
            let report: RejectionReport
            let holdsDrop: Bool
            enum Key: String, CodingKey { case holdsDrop = "holds_drop" }
            func encode(to encoder: any Encoder) throws {
                try report.encode(to: encoder)
                var fields = encoder.container(keyedBy: Key.self)
                try fields.encode(holdsDrop, forKey: .holdsDrop)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(Shown(report: self, holdsDrop: holdsDrop))) ?? Data(), as: UTF8.self)
    }
}

extension RejectionReport {
    /// What recovery needs from a claim's report, read field by field through the
    /// report's own keys: a stop may leave a report that is not whole, and the
    /// claim must still reach the quarantine.
    package struct Salvage: Decodable {
        package var drop: String?
        package var size: Int64?
        package var sha256: String?
        package var reason: String?
        package var detail: String?
        package var entry: String?
        package var bytesWritten: Int64?

        package init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: RejectionReport.CodingKeys.self)
            drop = try? fields.decodeIfPresent(String.self, forKey: .drop)
            size = (try? fields.decodeIfPresent(Int64.self, forKey: .size)) ?? (try? fields.decodeIfPresent(Int64.self, forKey: .drop_bytes))
            sha256 = try? fields.decodeIfPresent(String.self, forKey: .sha256)
            reason = try? fields.decodeIfPresent(String.self, forKey: .reason)
            detail = try? fields.decodeIfPresent(String.self, forKey: .detail)
            entry = try? fields.decodeIfPresent(String.self, forKey: .entry)
            bytesWritten = try? fields.decodeIfPresent(Int64.self, forKey: .bytes_written)
        }

        init() {}

        /// Whatever of `bytes` reads; nothing for what is not a JSON object.
        package static func read(_ bytes: [UInt8]?) -> Salvage {
            bytes.flatMap { try? JSONDecoder().decode(Salvage.self, from: Data($0)) } ?? Salvage()
        }
    }
}
