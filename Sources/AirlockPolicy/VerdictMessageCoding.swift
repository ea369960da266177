/// The verdict message's JSON: `Key` names every field once; `jsonText` writes
/// the fields in a fixed order, `init(from:)` reads them back by the same keys and
/// refuses a message of another version, of an unknown verdict, or with a field
/// missing or of the wrong type.
extension VerdictMessage: Decodable {
    public enum Key: String, CodingKey {
        case version, types, classes, verdict, reason, detail, entry, index, files, directories, entries, stage, errno
        case otherEntry = "other_entry", bytesWritten = "bytes_written"
        case confineMicroseconds = "confine_microseconds", confinement
        case addressSpaceBytes = "limit_as", cpuSeconds = "limit_cpu", openFiles = "limit_nofile", fileSizeBytes = "limit_fsize"
        case entryCount = "entry_count", truncated
        case landlockABI = "landlock_abi", landlock, seccomp, landlockState = "landlock_state", seccompState = "seccomp_state"
        case confinementProblems = "confinement_problems"
    }

    /// Why a well-formed JSON object is still not a verdict this build reads.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case unknownVersion(Int64)
        case unknownVerdict(String)

        public var description: String {
            switch self {
            case .unknownVersion(let version):
                return "the decoder's verdict is version \(version); this airlock reads version \(VerdictMessage.currentVersion)"
            case .unknownVerdict(let name): return "the decoder gave an unknown verdict \(JSONObjectWriter.quote(name))"
            }
        }
    }

    /// The message as one JSON object, version first and confinement last.
    public var jsonText: String {
        var json = JSONObjectWriter()
        json.add(Key.version, VerdictMessage.currentVersion)
        if let types { json.add(Key.types.rawValue, strings: types.map { ($0.entry, $0.type) }) }
        if let classes { json.add(Key.classes.rawValue, strings: classes.map { ($0.entry, ContentClass.text($0.classes)) }) }
        json.add(Key.verdict, outcome.name)
        outcome.write(to: &json)
        confinement?.write(to: &json)
        return json.text
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Key.self)
        let version = try fields.decode(Int64.self, forKey: .version)
        guard version == VerdictMessage.currentVersion else { throw Refusal.unknownVersion(version) }
        let types = try fields.decodeIfPresent([String: String].self, forKey: .types).map { table in
            table.map { DetectedType(entry: $0.key, type: $0.value) }.sorted { $0.entry.utf8.lexicographicallyPrecedes($1.entry.utf8) }
        }
        let classes = try fields.decodeIfPresent([String: String].self, forKey: .classes).map { table in
            try table.map { (entry, text) throws -> ClassifiedEntry in
                guard let classes = ContentClass.parse(text), !classes.isEmpty else {
                    throw DecodingError.dataCorruptedError(forKey: Key.classes, in: fields, debugDescription: "not content classes: \(text)")
                }
                return ClassifiedEntry(entry: entry, classes: classes)
            }.sorted { $0.entry.utf8.lexicographicallyPrecedes($1.entry.utf8) }
        }
        let outcome = try Outcome(fields)
        let confinement = try fields.contains(.landlockState) ? ConfinementFields(fields) : nil
        self.init(outcome, types: types, classes: classes, confinement: confinement)
    }
}

extension VerdictMessage.Outcome {
    fileprivate typealias Key = VerdictMessage.Key
    fileprivate typealias Fields = KeyedDecodingContainer<Key>

    fileprivate func write(to json: inout JSONObjectWriter) {
        switch self {
        case .accepted(let accepted):
            json.add(Key.files, accepted.files)
            json.add(Key.directories, accepted.directories)
            json.add(Key.entries, accepted.entries)
            json.add(Key.bytesWritten, accepted.bytesWritten)
        case .rejected(let rejected):
            json.add(Key.reason, rejected.reason)
            json.add(Key.detail, rejected.detail)
            json.add(Key.entry, rejected.entry)
            json.add(Key.otherEntry, rejected.otherEntry)
            json.add(Key.index, rejected.index)
            json.add(Key.entries, rejected.entries)
            json.add(Key.bytesWritten, rejected.bytesWritten)
        case .failed(let failed):
            json.add(Key.stage, failed.stage)
            json.add(Key.errno, Int64(failed.errno))
            json.add(Key.detail, failed.detail)
            json.add(Key.bytesWritten, failed.bytesWritten)
        case .unconfined(let detail), .unavailable(let detail):
            json.add(Key.detail, detail)
        case .probe(let probe):
            json.add(Key.confineMicroseconds, probe.confineMicroseconds)
            json.add(Key.addressSpaceBytes, probe.addressSpaceBytes)
            json.add(Key.cpuSeconds, probe.cpuSeconds)
            json.add(Key.openFiles, probe.openFiles)
            json.add(Key.fileSizeBytes, probe.fileSizeBytes)
            json.add(Key.confinement, probe.confinement)
        case .listing(let listing):
            if let headers = listing.headers {
                json.add(Key.entries.rawValue, objects: headers.entries.map(\.json))
                json.add(Key.entryCount, headers.count)
                json.add(Key.truncated.rawValue, headers.truncated)
            }
            json.add(Key.detail, listing.detail)
        }
    }

    fileprivate init(_ fields: Fields) throws {
        let name = try fields.decode(String.self, forKey: .verdict)
        let detail = { () throws -> String in try fields.decode(String.self, forKey: .detail) }
        switch name {
        case "accepted":
            self = .accepted(VerdictMessage.Accepted(
                files: try fields.decode(Int64.self, forKey: .files), directories: try fields.decode(Int64.self, forKey: .directories),
                entries: try fields.decode(Int64.self, forKey: .entries), bytesWritten: try fields.decode(Int64.self, forKey: .bytesWritten)))
        case "rejected":
            self = .rejected(VerdictMessage.Rejected(
                reason: try fields.decode(String.self, forKey: .reason), detail: try detail(),
                entry: try fields.decodeIfPresent(String.self, forKey: .entry),
                otherEntry: try fields.decodeIfPresent(String.self, forKey: .otherEntry),
                index: try fields.decodeIfPresent(Int64.self, forKey: .index),
                entries: try fields.decodeIfPresent(Int64.self, forKey: .entries),
                bytesWritten: try fields.decodeIfPresent(Int64.self, forKey: .bytesWritten)))
        case "error":
            self = .failed(VerdictMessage.Failed(
                stage: try fields.decode(String.self, forKey: .stage), errno: try fields.decode(Int32.self, forKey: .errno),
                detail: try detail(), bytesWritten: try fields.decodeIfPresent(Int64.self, forKey: .bytesWritten)))
        case "unconfined": self = .unconfined(detail: try detail())
        case "unavailable": self = .unavailable(detail: try detail())
        case "probe":
            self = .probe(VerdictMessage.Probe(
                confineMicroseconds: try fields.decode(Int64.self, forKey: .confineMicroseconds),
                addressSpaceBytes: try fields.decode(Int64.self, forKey: .addressSpaceBytes),
                cpuSeconds: try fields.decode(Int64.self, forKey: .cpuSeconds),
                openFiles: try fields.decode(Int64.self, forKey: .openFiles),
                fileSizeBytes: try fields.decode(Int64.self, forKey: .fileSizeBytes),
                confinement: try fields.decode(String.self, forKey: .confinement)))
        case "listing":
            var headers: VerdictMessage.Listing.Headers?
            if fields.contains(.entries) {
                headers = .init(entries: try fields.decode([ListedEntry].self, forKey: .entries),
                                count: try fields.decode(Int64.self, forKey: .entryCount),
                                truncated: try fields.decode(Bool.self, forKey: .truncated))
            }
            self = .listing(VerdictMessage.Listing(headers: headers, detail: try fields.decodeIfPresent(String.self, forKey: .detail)))
        default:
            throw VerdictMessage.Refusal.unknownVerdict(name)
        }
    }
}

extension VerdictMessage.ConfinementFields {
    fileprivate typealias Key = VerdictMessage.Key

    /// `landlock` and `seccomp` (1 when in force) are written for older readers; the states say it all.
    fileprivate func write(to json: inout JSONObjectWriter) {
        json.add(Key.landlockABI, landlockABI)
        json.add(Key.landlock, landlockState == "in-force" ? 1 : 0)
        json.add(Key.seccomp, seccompState == "in-force" ? 1 : 0)
        json.add(Key.landlockState, landlockState)
        json.add(Key.seccompState, seccompState)
        json.add(Key.confinementProblems, problems)
    }

    fileprivate init(_ fields: KeyedDecodingContainer<Key>) throws {
        _ = try fields.decode(Int64.self, forKey: .landlock)
        _ = try fields.decode(Int64.self, forKey: .seccomp)
        self.init(landlockABI: try fields.decode(Int64.self, forKey: .landlockABI),
                  landlockState: try fields.decode(String.self, forKey: .landlockState),
                  seccompState: try fields.decode(String.self, forKey: .seccompState),
                  problems: try fields.decodeIfPresent(String.self, forKey: .confinementProblems))
    }
}

extension ListedEntry: Decodable {
    public enum Key: String, CodingKey {
        case entry, encrypted
        case entryType = "entry_type", entrySize = "entry_size", linkTarget = "link_target"
    }

    /// The entry as one JSON object, in the order the listing writes it.
    public var jsonText: String { json.text }

    /// Keys in sorted order, as `quarantine contents --json` prints each entry;
    /// `encrypted` appears only when true.
    var json: JSONObjectWriter {
        var json = JSONObjectWriter()
        if encrypted { json.add(Key.encrypted.rawValue, true) }
        json.add(Key.entry, entry)
        json.add(Key.entrySize, entrySize)
        json.add(Key.entryType, entryType)
        json.add(Key.linkTarget, linkTarget)
        return json
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Key.self)
        self.init(entry: try fields.decode(String.self, forKey: .entry), entryType: try fields.decode(String.self, forKey: .entryType),
                  entrySize: try fields.decodeIfPresent(Int64.self, forKey: .entrySize),
                  linkTarget: try fields.decodeIfPresent(String.self, forKey: .linkTarget),
                  encrypted: try fields.decodeIfPresent(Bool.self, forKey: .encrypted) ?? false)
    }
}

extension JSONObjectWriter {
    /// Adds a field named by a coding key; nothing for nil.
    mutating func add<K: CodingKey>(_ key: K, _ value: String?) {
        if let value { add(key.stringValue, value) }
    }

    mutating func add<K: CodingKey>(_ key: K, _ value: Int64?) {
        if let value { add(key.stringValue, value) }
    }
}
