import AirlockSystem

/// What the overview needs of each record (its time, event and rejection
/// reason) read from the line's bytes without decoding the JSON: the lines are
/// airlock's own, `time` first and `event` second, and a key's quotes cannot
/// occur unescaped inside a string value, so `,"reason":"` is the key.
public struct JournalOutline: Sendable, Equatable {
    public let time: String
    public let event: String
    /// The reason code of a `rejected` record.
    public let reason: String?
    /// The whole record, for the few kinds a reader needs in full (`skipped`).
    public let entry: JournalEntry?

    static let eventKey: [UInt8] = Array("\",\"event\":\"".utf8)
    static let reasonKey: [UInt8] = Array(",\"reason\":\"".utf8)

    /// nil for a torn line or one that does not begin as airlock writes them.
    init?(_ line: ArraySlice<UInt8>, fully kinds: Set<String>) {
        guard let time = Journal.leadingTime(line), line[time.endIndex...].starts(with: JournalOutline.eventKey) else { return nil }
        let eventStart = time.endIndex + JournalOutline.eventKey.count
        guard let eventEnd = line[eventStart...].firstIndex(of: UInt8(ascii: "\"")), line.last == UInt8(ascii: "}") else { return nil }
        self.time = String(decoding: time, as: UTF8.self)
        event = String(decoding: line[eventStart..<eventEnd], as: UTF8.self)
        if event == "rejected", let key = JournalOutline.find(JournalOutline.reasonKey, in: line[eventEnd...]) {
            let start = key + JournalOutline.reasonKey.count
            reason = line[start...].firstIndex(of: UInt8(ascii: "\"")).map { String(decoding: line[start..<$0], as: UTF8.self) }
        } else {
            reason = nil
        }
        if kinds.contains(event) {
            guard let whole = JournalEntry.read(line) else { return nil }
            entry = whole
        } else {
            entry = nil
        }
    }

    static func contains(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Bool { find(needle, in: haystack) != nil }

    private static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = haystack.startIndex
        while index <= haystack.endIndex - needle.count {
            if haystack[index] == needle[0] && haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

extension Journal {
    /// Every record's outline, oldest first, `claimed` ones left out, and those
    /// older than `cutoff` (a journal timestamp) too; `fully` names the kinds
    /// whose whole record is decoded as well.
    public func outlines(since cutoff: String? = nil, fully kinds: Set<String> = []) throws(SystemError) -> [JournalOutline] {
        var result: [JournalOutline] = []
        let cutoffBytes = cutoff.map { Array($0.utf8) }
        for bytes in try fleetContents() {
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                if let cutoffBytes, let time = Journal.leadingTime(line), time.lexicographicallyPrecedes(cutoffBytes) { continue }
                if Journal.isClaim(line) { continue }
                if let outline = JournalOutline(line, fully: kinds) { result.append(outline) }
            }
        }
        return result
    }
}

extension Journal {
    /// The newest `limit` whole records (of `id`, when given) no older than
    /// `cutoff`, oldest first; read from the newest line backwards, so only
    /// what is shown is decoded.
    public func newest(_ limit: Int, since cutoff: String? = nil, id: String? = nil) throws(SystemError) -> [JournalEntry] {
        var result: [JournalEntry] = []
        let cutoffBytes = cutoff.map { Array($0.utf8) }
        let needle = id.map { Array("\"id\":\"\($0)\"".utf8) }
        search: for bytes in try fleetContents().reversed() {
            for line in bytes.split(separator: UInt8(ascii: "\n")).reversed() {
                guard result.count < limit else { break search }
                // Appends of several processes may land slightly out of time order: an older line does not end the search.
                if let cutoffBytes, let time = Journal.leadingTime(line), time.lexicographicallyPrecedes(cutoffBytes) { continue }
                if let needle, !JournalOutline.contains(needle, in: line) { continue }
                guard let entry = JournalEntry.read(line), id == nil || entry.record.id == id else { continue }
                result.append(entry)
            }
        }
        return result.reversed()
    }
}
