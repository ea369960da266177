import Foundation
import Testing

/// One event airlock prints as a JSON line: a drop's verdict from `run` (accepted,
/// rejected, deferred, skipped), a journal record from `events` and `history`
/// (those, and claimed, released and purged; with its cursor from `events`), or
/// `inspect`'s verdict on a file. Decoded strictly: a key
/// the kind does not have, a missing required key or a value of another JSON type
/// is an error, so a test notices the contract changing under it.
enum Event: Decodable, Equatable {
    case accepted(Accepted)
    case rejected(Rejected)
    case deferred(Deferred)
    case skipped(Skipped)
    case claimed(Claimed)
    case released(Released)
    case purged(Purged)
    case inspected(Inspected)

    enum Kind: String, Decodable {
        case accepted, rejected, deferred, skipped, claimed, released, purged, inspected
    }

    struct Accepted: Decodable, Equatable {
        let time: String
        let event: Kind
        let id: String
        let drop: String
        let output: String
        /// Absent from a journal record that recovery wrote without its counts.
        let files: Int64?
        let bytes: Int64?
        let size: Int64?
        let sha256: String?
        let durationMilliseconds: Int64?
        let uploaderUID: UInt32?
        let uploader: String?
        /// Entry name to MIME type (the journal's, with content.detect_types).
        let types: [String: String]?
        let decoderMaxRSSKiB: Int64?
        let recovered: Bool?
        let cursor: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case time, event, id, drop, output, files, bytes, size, sha256, types, recovered, cursor, uploader
            case durationMilliseconds = "duration_ms", uploaderUID = "uploader_uid", decoderMaxRSSKiB = "decoder_max_rss_kib"
        }
    }

    struct Rejected: Decodable, Equatable {
        let time: String
        let event: Kind
        let id: String
        let drop: String
        let reason: String
        let entry: String?
        let otherEntry: String?
        /// On standard output; the journal keeps it in the report instead.
        let detail: String?
        let bytesWritten: Int64
        let size: Int64?
        let sha256: String?
        let durationMilliseconds: Int64?
        let uploaderUID: UInt32?
        let uploader: String?
        let decoderMaxRSSKiB: Int64?
        let recovered: Bool?
        let cursor: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case time, event, id, drop, reason, entry, detail, size, sha256, recovered, cursor, uploader
            case otherEntry = "other_entry", bytesWritten = "bytes_written", durationMilliseconds = "duration_ms"
            case uploaderUID = "uploader_uid", decoderMaxRSSKiB = "decoder_max_rss_kib"
        }
    }

    struct Deferred: Decodable, Equatable {
        let time: String
        let event: Kind
        let id: String
        let drop: String
        let detail: String
        let size: Int64?
        let sha256: String?
        let durationMilliseconds: Int64?
        let uploaderUID: UInt32?
        let uploader: String?
        let decoderMaxRSSKiB: Int64?
        let recovered: Bool?
        let cursor: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case time, event, id, drop, detail, size, sha256, recovered, cursor, uploader
            case durationMilliseconds = "duration_ms", uploaderUID = "uploader_uid", decoderMaxRSSKiB = "decoder_max_rss_kib"
        }
    }

    /// An inbox entry that cannot be claimed; standard output gives no time, the journal does.
    struct Skipped: Decodable, Equatable {
        let time: String?
        let event: Kind
        let drop: String
        let detail: String
        let dropHex: String?
        let device: Int64?
        let inode: Int64?
        /// The entry's ctime, `seconds.nanoseconds`.
        let changed: String?
        let cursor: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case time, event, drop, detail, device, inode, changed, cursor
            case dropHex = "drop_hex"
        }
    }

    struct Claimed: Decodable, Equatable {
        let time: String
        let event: Kind
        let id: String
        let drop: String
        let size: Int64?
        let sha256: String?
        let uploaderUID: UInt32?
        let uploader: String?
        let cursor: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case time, event, id, drop, size, sha256, uploader, cursor
            case uploaderUID = "uploader_uid"
        }
    }

    struct Released: Decodable, Equatable {
        let time: String
        let event: Kind
        let id: String
        let drop: String
        /// `inbox/NAME`.
        let to: String
        let sha256: String?
        let size: Int64?
        let by: String?
        let releaseReason: String?
        let cursor: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case time, event, id, drop, to, sha256, size, by, cursor
            case releaseReason = "release_reason"
        }
    }

    struct Purged: Decodable, Equatable {
        let time: String
        let event: Kind
        let id: String
        let drop: String
        let reason: String
        let size: Int64?
        let purgeReason: String?
        let by: String?
        let cursor: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case time, event, id, drop, reason, size, by, cursor
            case purgeReason = "purge_reason"
        }
    }

    /// `inspect`: what a decode of the file would decide, without a root's intake.
    struct Inspected: Decodable, Equatable {
        let event: Kind
        let drop: String
        let verdict: Kind
        let format: String?
        let files: Int64?
        let bytes: Int64?
        let reason: String?
        let entry: String?
        let detail: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case event, drop, verdict, format, files, bytes, reason, entry, detail
        }
    }

    init(from decoder: any Decoder) throws {
        let kind = try decoder.container(keyedBy: StrictKeys.self).decode(Kind.self, forKey: StrictKeys("event"))
        switch kind {
        case .accepted: self = .accepted(try StrictKeys.decode(Accepted.self, Accepted.CodingKeys.self, from: decoder))
        case .rejected: self = .rejected(try StrictKeys.decode(Rejected.self, Rejected.CodingKeys.self, from: decoder))
        case .deferred: self = .deferred(try StrictKeys.decode(Deferred.self, Deferred.CodingKeys.self, from: decoder))
        case .skipped: self = .skipped(try StrictKeys.decode(Skipped.self, Skipped.CodingKeys.self, from: decoder))
        case .claimed: self = .claimed(try StrictKeys.decode(Claimed.self, Claimed.CodingKeys.self, from: decoder))
        case .released: self = .released(try StrictKeys.decode(Released.self, Released.CodingKeys.self, from: decoder))
        case .purged: self = .purged(try StrictKeys.decode(Purged.self, Purged.CodingKeys.self, from: decoder))
        case .inspected: self = .inspected(try StrictKeys.decode(Inspected.self, Inspected.CodingKeys.self, from: decoder))
        }
    }

    /// Decodes every line of `text` (JSON Lines); a line that is not an event is
    /// recorded as an issue where the test asked, and left out.
    static func lines(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [Event] {
        text.split(separator: "\n").compactMap { line in
            do {
                return try JSONDecoder().decode(Event.self, from: Data(line.utf8))
            } catch {
                Issue.record("not an event: \(line): \(error)", sourceLocation: sourceLocation)
                return nil
            }
        }
    }
}

extension Event {
    /// The records of journal files, in order: each whole line decoded strictly.
    /// A torn line, what a kill in the middle of a write leaves (not JSON at all),
    /// is skipped; a line that is JSON but not a record is an issue.
    static func journal(_ files: [URL], sourceLocation: SourceLocation = #_sourceLocation) throws -> [Event] {
        var records: [Event] = []
        for file in files {
            for line in try Data(contentsOf: file).split(separator: 0x0A) {
                guard (try? JSONSerialization.jsonObject(with: Data(line))) != nil else { continue }
                records += lines(String(decoding: line, as: UTF8.self), sourceLocation: sourceLocation)
            }
        }
        return records
    }
}

extension Sandbox {
    /// The records of state/journal.jsonl (the current file), oldest first.
    func journal(sourceLocation: SourceLocation = #_sourceLocation) throws -> [Event] {
        try Event.journal([root.appendingPathComponent("state/journal.jsonl")], sourceLocation: sourceLocation)
    }
}

/// What every kind has, or may have, read without a switch.
extension Event {
    var kind: Kind {
        switch self {
        case .accepted: .accepted
        case .rejected: .rejected
        case .deferred: .deferred
        case .skipped: .skipped
        case .claimed: .claimed
        case .released: .released
        case .purged: .purged
        case .inspected: .inspected
        }
    }

    /// The drop's id (the quarantine directory's name); a skipped entry has none.
    var id: String? {
        switch self {
        case .accepted(let event): event.id
        case .rejected(let event): event.id
        case .deferred(let event): event.id
        case .skipped, .inspected: nil
        case .claimed(let event): event.id
        case .released(let event): event.id
        case .purged(let event): event.id
        }
    }

    /// The drop's name, escaped.
    var drop: String {
        switch self {
        case .accepted(let event): event.drop
        case .rejected(let event): event.drop
        case .deferred(let event): event.drop
        case .skipped(let event): event.drop
        case .claimed(let event): event.drop
        case .released(let event): event.drop
        case .purged(let event): event.drop
        case .inspected(let event): event.drop
        }
    }

    var time: String? {
        switch self {
        case .accepted(let event): event.time
        case .rejected(let event): event.time
        case .deferred(let event): event.time
        case .skipped(let event): event.time
        case .claimed(let event): event.time
        case .released(let event): event.time
        case .purged(let event): event.time
        case .inspected: nil
        }
    }

    /// The journal cursor after this record (`events` only).
    var cursor: String? {
        switch self {
        case .accepted(let event): event.cursor
        case .rejected(let event): event.cursor
        case .deferred(let event): event.cursor
        case .skipped(let event): event.cursor
        case .claimed(let event): event.cursor
        case .released(let event): event.cursor
        case .purged(let event): event.cursor
        case .inspected: nil
        }
    }

    /// The reason code of a rejection (inspected or not), or of the rejection a purge removed.
    var reason: String? {
        switch self {
        case .rejected(let event): event.reason
        case .purged(let event): event.reason
        case .inspected(let event): event.reason
        default: nil
        }
    }

    var detail: String? {
        switch self {
        case .rejected(let event): event.detail
        case .deferred(let event): event.detail
        case .skipped(let event): event.detail
        case .inspected(let event): event.detail
        default: nil
        }
    }

    /// The offending entry of a rejection.
    var entry: String? {
        switch self {
        case .rejected(let event): event.entry
        case .inspected(let event): event.entry
        default: nil
        }
    }

    /// `outbox/NAME` of an acceptance.
    var output: String? {
        if case .accepted(let event) = self { return event.output }
        return nil
    }

    var files: Int64? {
        switch self {
        case .accepted(let event): event.files
        case .inspected(let event): event.files
        default: nil
        }
    }

    /// The bytes an acceptance (or an inspection) wrote.
    var bytes: Int64? {
        switch self {
        case .accepted(let event): event.bytes
        case .inspected(let event): event.bytes
        default: nil
        }
    }

    /// `inspect`'s verdict: accepted or rejected.
    var verdict: Kind? {
        if case .inspected(let event) = self { return event.verdict }
        return nil
    }

    var accepted: Accepted? {
        if case .accepted(let event) = self { return event }
        return nil
    }

    var rejected: Rejected? {
        if case .rejected(let event) = self { return event }
        return nil
    }
}

/// Any key of a JSON object, to see all of them before decoding a type.
struct StrictKeys: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    /// `T` from `decoder`, after checking that the object holds only keys `keys` names.
    static func decode<T: Decodable, K: CodingKey & CaseIterable>(_ type: T.Type, _ keys: K.Type, from decoder: any Decoder) throws -> T {
        let present = try decoder.container(keyedBy: StrictKeys.self).allKeys.map(\.stringValue)
        let known = Set(K.allCases.map(\.stringValue))
        let unknown = present.filter { !known.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(T.self) has no key \(unknown)"))
        }
        return try T(from: decoder)
    }
}
