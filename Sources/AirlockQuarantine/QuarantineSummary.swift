import AirlockPolicy
import Foundation

extension QuarantineDesk {
    /// One line of `quarantine list`: what the index keeps of an entry's report.
    public struct Summary: Equatable, Sendable {
        public var id: String
        public var decidedAt: String
        public var reason: String
        /// The drop's name, the offending entry and the uploader, escaped as the report has them.
        public var drop: String
        public var entry: String?
        public var uploader: String?
        public var size: Int64?
        public var released: Bool
        /// The bytes of the entry's files (see `Entry.heldBytes`).
        public var heldBytes: Int64

        init(_ entry: Entry) {
            id = entry.id
            decidedAt = entry.decidedAt
            reason = entry.reason
            drop = entry.drop
            self.entry = entry.entry
            uploader = entry.report.uploader
            size = entry.size
            released = entry.released
            heldBytes = entry.heldBytes
        }

        /// `quarantine list --json`: one object per line.
        public var jsonText: String {
            var line = JSONObjectWriter()
            line.add("id", id)
            line.add("decided_at", decidedAt)
            line.add("drop", drop)
            if let size { line.add("size", size) }
            line.add("reason", reason)
            if let entry { line.add("entry", entry) }
            if let uploader { line.add("uploader", uploader) }
            line.add("released", released)
            return line.text
        }

        /// The index's line: tab-separated fields in `IndexLine.Field` order. Escaped
        /// names hold no tab or newline (controls are `\xHH`); an absent field is empty.
        var indexLine: [UInt8] {
            let fields = [id, decidedAt, reason, released ? "1" : "0", size.map(String.init) ?? "", uploader ?? "", drop, entry ?? "",
                          String(heldBytes)]
            return Array((fields.joined(separator: "\t") + "\n").utf8)
        }
    }

    /// Rebuilds state/quarantine.index from every report; returns the number of entries.
    public func rebuildIndex() throws -> Int {
        try QuarantineIndex(desk: self).rebuild()
    }

    /// The number of entries and the bytes they hold, from the index.
    public func totals() throws -> (entries: Int64, bytes: Int64) {
        var bytes: Int64 = 0
        let lines = try QuarantineIndex(desk: self).current()
        for line in lines { bytes += line.heldBytes }
        return (Int64(lines.count), bytes)
    }

    /// The entries `query` selects, newest first, one page of them. Filters
    /// compare the index's bytes; only the page is decoded.
    public func summaries(_ query: QuarantineQuery) throws -> [Summary] {
        let filter = IndexLine.Filter(query)
        var skipped = 0
        var page: [Summary] = []
        for line in try QuarantineIndex(desk: self).current() where filter.matches(line) {
            if skipped < query.offset {
                skipped += 1
                continue
            }
            if let limit = query.limit, page.count >= limit { break }
            if let summary = line.summary { page.append(summary) }
        }
        return page
    }
}
