import AirlockPolicy
import Foundation

/// The journal's fields: each kind lists its fields once, in the order its line
/// has them; the line, `history --json` (keys sorted) and `history` all come from
/// that list, and reading goes through the same keys.
extension JournalRecord {
    public enum Key: String, CodingKey, Sendable {
        case time, event, id, drop, size, sha256, output, files, bytes, types, reason, entry, detail, device, inode, changed, to
        case uploaderUID = "uploader_uid", uploader, bytesWritten = "bytes_written", durationMilliseconds = "duration_ms"
        case decoderMaxRSSKiB = "decoder_max_rss_kib", recovered, dropHex = "drop_hex", purgeReason = "purge_reason", by, releaseReason = "release_reason"
    }

    /// A field's value as the journal writes it.
    public enum Value: Sendable {
        case text(String)
        case number(Int64)
        case flag(Bool)
        /// A nested object of strings, in the order given.
        case table([(String, String)])
    }

    /// The record's fields after `time` and `event`, in line order; absent ones left out.
    public var fields: [(Key, Value)] {
        var list = Fields()
        switch self {
        case .claimed(let record):
            list.add(record.drop)
            list.add(.uploaderUID, record.uploaderUID.map { Int64($0) })
            list.add(.uploader, record.uploader)
        case .accepted(let record):
            list.add(record.drop)
            list.add(.output, record.output)
            list.add(.files, record.files)
            list.add(.bytes, record.bytes)
            if let types = record.types { list.items.append((.types, .table(types.map { ($0.entry, $0.type) }))) }
            list.add(record.measures)
        case .rejected(let record):
            list.add(record.drop)
            list.add(.reason, record.reason)
            list.add(.entry, record.entry)
            list.add(.bytesWritten, record.bytesWritten)
            list.add(record.measures)
        case .deferred(let record):
            list.add(record.drop)
            list.add(.detail, record.detail)
            list.add(record.measures)
        case .skipped(let record):
            list.add(.drop, record.drop)
            list.add(.dropHex, record.dropHex)
            list.add(.device, record.device)
            list.add(.inode, record.inode)
            list.add(.changed, record.changed)
            list.add(.detail, record.detail)
        case .released(let record):
            list.add(.id, record.id)
            list.add(.drop, record.drop)
            list.add(.to, record.to)
            list.add(.sha256, record.sha256)
            list.add(.size, record.size)
            list.add(.by, record.by)
            list.add(.releaseReason, record.releaseReason)
        case .purged(let record):
            list.add(.id, record.id)
            list.add(.drop, record.drop)
            list.add(.reason, record.reason)
            list.add(.size, record.size)
            list.add(.purgeReason, record.purgeReason)
            list.add(.by, record.by)
        }
        return list.items
    }

    private struct Fields {
        var items: [(Key, Value)] = []

        mutating func add(_ key: Key, _ value: String?) { if let value { items.append((key, .text(value))) } }
        mutating func add(_ key: Key, _ value: Int64?) { if let value { items.append((key, .number(value))) } }

        mutating func add(_ drop: Drop) {
            add(.id, drop.id)
            add(.drop, drop.drop)
            add(.size, drop.size)
            add(.sha256, drop.sha256)
        }

        mutating func add(_ measures: Measures) {
            add(.durationMilliseconds, measures.durationMilliseconds)
            add(.decoderMaxRSSKiB, measures.decoderMaxRSSKiB)
            if measures.recovered { items.append((.recovered, .flag(true))) }
        }
    }
}

extension JournalEntry {
    /// The journal line, without its newline: `time`, `event`, then the record's fields.
    public var line: String {
        var json = JSONObjectWriter()
        json.add(JournalRecord.Key.time.rawValue, time)
        json.add(JournalRecord.Key.event.rawValue, record.event)
        for (key, value) in record.fields { value.add(key.rawValue, to: &json) }
        return json.text
    }

    /// Every field with its key, `time` and `event` first, in line order.
    public var allFields: [(JournalRecord.Key, JournalRecord.Value)] {
        [(.time, .text(time)), (.event, .text(record.event))] + record.fields
    }

    /// The line with its keys, and those of `types`, in byte order: `history --json`.
    public var sortedLine: String {
        var json = JSONObjectWriter()
        for (key, value) in allFields.sorted(by: { $0.0.rawValue.utf8.lexicographicallyPrecedes($1.0.rawValue.utf8) }) {
            if case .table(let pairs) = value {
                json.add(key.rawValue, strings: pairs.sorted { $0.0.utf8.lexicographicallyPrecedes($1.0.utf8) })
            } else {
                value.add(key.rawValue, to: &json)
            }
        }
        return json.text
    }
}

extension JournalRecord.Value: CustomStringConvertible {
    fileprivate func add(_ key: String, to json: inout JSONObjectWriter) {
        switch self {
        case .text(let text): json.add(key, text)
        case .number(let number): json.add(key, number)
        case .flag(let flag): json.add(key, flag)
        case .table(let pairs): json.add(key, strings: pairs)
        }
    }

    /// As `history` prints it; a flag as 1 or 0, as it always has.
    public var description: String {
        switch self {
        case .text(let text): return text
        case .number(let number): return String(number)
        case .flag(let flag): return flag ? "1" : "0"
        case .table(let pairs): return "[" + pairs.map { "\"\($0.0)\": \"\($0.1)\"" }.joined(separator: ", ") + "]"
        }
    }
}

extension JournalEntry: Decodable {
    /// Why a whole JSON line is still not a record this build reads.
    struct UnknownEvent: Error {
        let event: String
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: JournalRecord.Key.self)
        time = try fields.decode(String.self, forKey: .time)
        record = try JournalRecord(fields)
    }

    /// One line of the journal; nil for a torn or foreign one.
    static func read(_ line: some Collection<UInt8>) -> JournalEntry? {
        try? JSONDecoder().decode(JournalEntry.self, from: Data(line))
    }
}

extension JournalRecord {
    fileprivate typealias Container = KeyedDecodingContainer<Key>

    fileprivate init(_ fields: Container) throws {
        func text(_ key: Key) throws -> String { try fields.decode(String.self, forKey: key) }
        func number(_ key: Key) throws -> Int64 { try fields.decode(Int64.self, forKey: key) }
        func optionalText(_ key: Key) throws -> String? { try fields.decodeIfPresent(String.self, forKey: key) }
        func optionalNumber(_ key: Key) throws -> Int64? { try fields.decodeIfPresent(Int64.self, forKey: key) }
        let event = try text(.event)
        switch event {
        case "claimed":
            self = .claimed(Claimed(drop: try Drop(fields), uploaderUID: try fields.decodeIfPresent(UInt32.self, forKey: .uploaderUID),
                                    uploader: try optionalText(.uploader)))
        case "accepted":
            let types = try fields.decodeIfPresent([String: String].self, forKey: .types).map { table in
                table.map { DetectedType(entry: $0.key, type: $0.value) }.sorted { $0.entry.utf8.lexicographicallyPrecedes($1.entry.utf8) }
            }
            self = .accepted(Accepted(drop: try Drop(fields), output: try text(.output), files: try optionalNumber(.files),
                                      bytes: try optionalNumber(.bytes), types: types, measures: try Measures(fields)))
        case "rejected":
            self = .rejected(Rejected(drop: try Drop(fields), reason: try text(.reason), entry: try optionalText(.entry),
                                      bytesWritten: try number(.bytesWritten), measures: try Measures(fields)))
        case "deferred":
            self = .deferred(Deferred(drop: try Drop(fields), detail: try text(.detail), measures: try Measures(fields)))
        case "skipped":
            self = .skipped(Skipped(drop: try text(.drop), dropHex: try text(.dropHex), device: try number(.device),
                                    inode: try number(.inode), changed: try text(.changed), detail: try text(.detail)))
        case "released":
            self = .released(Released(id: try text(.id), drop: try text(.drop), to: try text(.to), sha256: try optionalText(.sha256),
                                      size: try optionalNumber(.size), by: try optionalText(.by),
                                      releaseReason: try optionalText(.releaseReason)))
        case "purged":
            self = .purged(Purged(id: try text(.id), drop: try text(.drop), reason: try text(.reason), size: try optionalNumber(.size),
                                  purgeReason: try optionalText(.purgeReason), by: try optionalText(.by)))
        default:
            throw JournalEntry.UnknownEvent(event: event)
        }
    }
}

extension JournalRecord.Drop {
    fileprivate init(_ fields: KeyedDecodingContainer<JournalRecord.Key>) throws {
        self.init(id: try fields.decode(String.self, forKey: .id), drop: try fields.decode(String.self, forKey: .drop),
                  size: try fields.decodeIfPresent(Int64.self, forKey: .size), sha256: try fields.decodeIfPresent(String.self, forKey: .sha256))
    }
}

extension JournalRecord.Measures {
    fileprivate init(_ fields: KeyedDecodingContainer<JournalRecord.Key>) throws {
        self.init(durationMilliseconds: try fields.decodeIfPresent(Int64.self, forKey: .durationMilliseconds),
                  decoderMaxRSSKiB: try fields.decodeIfPresent(Int64.self, forKey: .decoderMaxRSSKiB),
                  recovered: try fields.decodeIfPresent(Bool.self, forKey: .recovered) ?? false)
    }
}
