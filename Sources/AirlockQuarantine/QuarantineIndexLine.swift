import Foundation

/// A line of `state/quarantine.index` as bytes: split once, decoded only when shown.
struct IndexLine {
    enum Field: Int {
        case id, decidedAt, reason, released, size, uploader, drop, entry, heldBytes
    }

    static let fieldCount = 9
    let fields: [ArraySlice<UInt8>]

    /// nil for a line that is torn or not ours.
    init?(_ line: ArraySlice<UInt8>) {
        let fields = line.split(separator: UInt8(ascii: "\t"), maxSplits: IndexLine.fieldCount, omittingEmptySubsequences: false)
        guard fields.count == IndexLine.fieldCount, fields[0].count == 25, !fields[1].isEmpty, !fields[2].isEmpty,
              fields[3].count == 1, fields[3].first == UInt8(ascii: "0") || fields[3].first == UInt8(ascii: "1"),
              !fields[8].isEmpty, fields[8].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        self.fields = fields
    }

    init(_ summary: QuarantineDesk.Summary) {
        self.init(summary.indexLine.dropLast()[...])!
    }

    subscript(_ field: Field) -> ArraySlice<UInt8> { fields[field.rawValue] }

    var id: ArraySlice<UInt8> { self[.id] }
    var key: Key { Key(self[.id]) }

    /// A quarantine id (25 bytes) packed for hashing: cheaper than hashing the bytes one by one.
    struct Key: Hashable {
        let a: UInt64, b: UInt64, c: UInt64, d: UInt8

        init(_ id: some Collection<UInt8>) {
            var words: [UInt64] = [0, 0, 0]
            var last: UInt8 = 0
            for (index, byte) in id.enumerated() {
                if index < 24 { words[index / 8] |= UInt64(byte) << (8 * UInt64(index % 8)) } else { last = byte }
            }
            (a, b, c, d) = (words[0], words[1], words[2], last)
        }
    }
    var decidedAt: ArraySlice<UInt8> { self[.decidedAt] }
    var heldBytes: Int64 { Int64(String(decoding: self[.heldBytes], as: UTF8.self)) ?? 0 }

    /// Newest first: by decision time, then id, byte by byte (the times are fixed-width UTC).
    static func newerFirst(_ a: IndexLine, _ b: IndexLine) -> Bool {
        if a.decidedAt != b.decidedAt { return b.decidedAt.lexicographicallyPrecedes(a.decidedAt) }
        return b.id.lexicographicallyPrecedes(a.id)
    }

    var bytes: [UInt8] { Array(fields.joined(separator: [UInt8(ascii: "\t")])) + [UInt8(ascii: "\n")] }

    /// The summary the line holds; nil if a field does not decode.
    var summary: QuarantineDesk.Summary? {
        func text(_ field: Field) -> String { String(decoding: self[field], as: UTF8.self) }
        func optional(_ field: Field) -> String? { self[field].isEmpty ? nil : text(field) }
        let id = text(.id)
        guard QuarantineDesk.isWellFormed(id) else { return nil }
        let size = optional(.size).flatMap { Int64($0) }
        return QuarantineDesk.Summary(id: id, decidedAt: text(.decidedAt), reason: text(.reason), drop: text(.drop), entry: optional(.entry),
                                      uploader: optional(.uploader), size: size, released: self[.released].first == UInt8(ascii: "1"),
                                      heldBytes: heldBytes)
    }

    /// `QuarantineQuery`'s filters on the line's bytes.
    struct Filter {
        let reason: [UInt8]?
        let uploader: [UInt8]?
        let cutoff: [UInt8]?
        /// Lowercased, when ASCII (then matched byte by byte ignoring ASCII case); else nil.
        let asciiText: [UInt8]?
        let otherText: String?

        init(_ query: QuarantineQuery) {
            reason = query.reason.map { Array($0.utf8) }
            uploader = query.uploader.map { Array($0.utf8) }
            cutoff = query.cutoff().map { Array($0.utf8) }
            let text = query.text.flatMap { $0.isEmpty ? nil : $0 }
            if let text, text.utf8.allSatisfy({ $0 < 0x80 }) {
                asciiText = Array(text.lowercased().utf8)
                otherText = nil
            } else {
                asciiText = nil
                otherText = text
            }
        }

        func matches(_ line: IndexLine) -> Bool {
            if let reason, !line[.reason].elementsEqual(reason) { return false }
            if let uploader, !line[.uploader].elementsEqual(uploader) { return false }
            if let cutoff, line.decidedAt.lexicographicallyPrecedes(cutoff) { return false }
            let searched: [IndexLine.Field] = [.id, .drop, .entry, .uploader]
            if let asciiText {
                return searched.contains { Filter.contains(line[$0], asciiText) }
            }
            if let otherText {
                return searched.contains { String(decoding: line[$0], as: UTF8.self).range(of: otherText, options: [.caseInsensitive]) != nil }
            }
            return true
        }

        /// Whether `haystack` contains `needle` (lowercase ASCII), ignoring ASCII case.
        static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
            guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
            let lower = { (byte: UInt8) -> UInt8 in (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
            var start = haystack.startIndex
            while start <= haystack.endIndex - needle.count {
                var matched = true
                for (offset, byte) in needle.enumerated() where lower(haystack[start + offset]) != byte {
                    matched = false
                    break
                }
                if matched { return true }
                start += 1
            }
            return false
        }
    }
}

extension QuarantineDesk.Summary {
    init(id: String, decidedAt: String, reason: String, drop: String, entry: String?, uploader: String?, size: Int64?, released: Bool,
         heldBytes: Int64) {
        self.id = id
        self.decidedAt = decidedAt
        self.reason = reason
        self.drop = drop
        self.entry = entry
        self.uploader = uploader
        self.size = size
        self.released = released
        self.heldBytes = heldBytes
    }
}
