import AirlockPolicy

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

        init(_ entry: Entry) {
            id = entry.id
            decidedAt = entry.decidedAt
            reason = entry.reason
            drop = entry.drop
            self.entry = entry.entry
            uploader = entry.report.uploader
            size = entry.size
            released = entry.released
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

        /// The index's line: tab-separated fields. Escaped names hold no tab or
        /// newline (controls are `\xHH`), and an absent field is empty.
        var indexLine: [UInt8] {
            let fields = [id, decidedAt, reason, released ? "1" : "0", size.map(String.init) ?? "", uploader ?? "", drop, entry ?? ""]
            return Array((fields.joined(separator: "\t") + "\n").utf8)
        }

        /// A line of the index; nil for one that is torn or not ours.
        init?(indexLine line: ArraySlice<UInt8>) {
            let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            guard fields.count == 8 else { return nil }
            func text(_ index: Int) -> String { String(decoding: fields[index], as: UTF8.self) }
            id = text(0)
            decidedAt = text(1)
            reason = text(2)
            guard QuarantineDesk.isWellFormed(id), fields[3].count == 1, [UInt8(ascii: "0"), UInt8(ascii: "1")].contains(fields[3].first!),
                  !decidedAt.isEmpty, !reason.isEmpty else { return nil }
            released = fields[3].first == UInt8(ascii: "1")
            if fields[4].isEmpty {
                size = nil
            } else {
                guard let value = Int64(text(4)) else { return nil }
                size = value
            }
            uploader = fields[5].isEmpty ? nil : text(5)
            drop = text(6)
            entry = fields[7].isEmpty ? nil : text(7)
        }
    }

    /// Rebuilds state/quarantine.index from every report; returns the number of entries.
    public func rebuildIndex() throws -> Int {
        try QuarantineIndex(desk: self).rebuild()
    }

    /// The entries `query` selects, newest first, one page of them.
    public func summaries(_ query: QuarantineQuery) throws -> [Summary] {
        let cutoff = query.cutoff()
        var skipped = 0
        var page: [Summary] = []
        for summary in try QuarantineIndex(desk: self).current() {
            guard query.matches(id: summary.id, decidedAt: summary.decidedAt, reason: summary.reason, drop: summary.drop,
                                entry: summary.entry, uploader: summary.uploader, cutoff: cutoff) else { continue }
            if skipped < query.offset {
                skipped += 1
                continue
            }
            if let limit = query.limit, page.count >= limit { break }
            page.append(summary)
        }
        return page
    }
}
