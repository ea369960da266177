/// Reads 7z header fields: bytes, 7z's variable-length numbers, bit vectors.
/// Every read is bounded by the bytes it was given.
struct SevenZipCursor {
    private let bytes: ArraySlice<UInt8>
    private var at: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        at = bytes.startIndex
    }

    private static func truncated() -> SevenZipHeader.Failure { SevenZipHeader.Failure("the 7z header is truncated") }

    var remaining: Int { bytes.endIndex - at }

    mutating func byte() throws -> UInt8 {
        guard at < bytes.endIndex else { throw SevenZipCursor.truncated() }
        defer { at += 1 }
        return bytes[at]
    }

    mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
        guard count <= UInt64(remaining) else { throw SevenZipCursor.truncated() }
        defer { at += Int(count) }
        return bytes[at..<(at + Int(count))]
    }

    mutating func skip(_ count: UInt64) throws { _ = try take(count) }

    /// A little-endian 64-bit field (the signature header's).
    mutating func fixed64() -> UInt64 {
        (try? take(8))?.reversed().reduce(0) { $0 << 8 | UInt64($1) } ?? 0
    }

    /// 7z's number: the first byte's leading one bits say how many bytes follow.
    mutating func number() throws -> UInt64 {
        let first = try byte()
        var mask: UInt8 = 0x80
        var value: UInt64 = 0
        for index in 0..<8 {
            if first & mask == 0 {
                return value | UInt64(first & (mask &- 1)) << (8 * index)
            }
            value |= UInt64(try byte()) << (8 * index)
            mask >>= 1
        }
        return value
    }

    /// A number used as a count of things each stored in at least one bit of
    /// what remains: larger is a lie.
    mutating func count() throws -> Int {
        let value = try number()
        guard value <= UInt64(remaining) * 8 else { throw SevenZipHeader.Failure("a 7z header count exceeds its header") }
        return Int(value)
    }

    /// `count` booleans, most significant bit first.
    mutating func bits(_ count: Int) throws -> [Bool] {
        let stored = try take(UInt64((count + 7) / 8))
        return (0..<count).map { stored[stored.startIndex + $0 / 8] & (0x80 >> UInt8($0 % 8)) != 0 }
    }

    /// A digest vector: all-defined flag or a bit vector, then a CRC-32 per defined item.
    mutating func digests(_ count: Int) throws -> [UInt32?] {
        let defined = try byte() != 0 ? [Bool](repeating: true, count: count) : try bits(count)
        return try defined.map { isDefined in
            guard isDefined else { return nil }
            return try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
    }

    /// A vector of `count` optional values of `size` bytes each (times,
    /// attributes): the defined vector, the external flag (0: the values follow
    /// here), then each defined value; nil for one not defined.
    @discardableResult
    mutating func definedValues(_ count: Int, size: Int) throws -> [ArraySlice<UInt8>?] {
        let defined = try byte() != 0 ? [Bool](repeating: true, count: count) : try bits(count)
        guard try byte() == 0 else { throw SevenZipHeader.Failure("7z file times or attributes stored outside the header", .unsupportedFormat) }
        return try defined.map { try $0 ? take(UInt64(size)) : nil }
    }

    /// `count` NUL-terminated UTF-16LE names, as UTF-8 (for reports only).
    mutating func utf16Names(_ count: Int) throws -> [[UInt8]] {
        var names: [[UInt8]] = []
        for _ in 0..<count {
            var units: [UInt16] = []
            while true {
                let low = try byte(), high = try byte()
                let unit = UInt16(high) << 8 | UInt16(low)
                if unit == 0 { break }
                units.append(unit)
            }
            names.append(Array(String(decoding: units, as: UTF16.self).utf8))
        }
        return names
    }
}

/// A 7z StreamsInfo block: where packed streams lie, and the folders (coder
/// chains) that unpack them. Sub-streams are read only to be skipped.
struct SevenZipStreams {
    struct Coder {
        let id: [UInt8]
        let properties: [UInt8]
    }

    struct Folder {
        var coders: [Coder] = []
        var unpackSizes: [UInt64] = []
        var crc: UInt32?
        /// Which of the coders' outputs is the folder's own: the one no bind pair takes.
        var mainOutput = 0
        var size: UInt64? { mainOutput < unpackSizes.count ? unpackSizes[mainOutput] : nil }
    }

    private(set) var packPosition: UInt64 = 0
    private(set) var packSizes: [UInt64] = []
    private(set) var folders: [Folder] = []
    /// How many streams the folders unpack to (one per file with data): the
    /// sub-streams' counts, or one per folder without them.
    var unpackStreams: Int { subStreams ?? folders.count }
    private var subStreams: Int?
    /// Each unpacked stream's size and CRC, in order (one per file with data),
    /// when the header has sub-streams.
    private(set) var streams: [(size: UInt64, crc: UInt32?)] = []

    /// No streams: a header without main streams.
    init() {}

    init(_ cursor: inout SevenZipCursor) throws {
        while true {
            switch try cursor.number() {
            case 0x00: return
            case 0x06: try readPackInfo(&cursor)
            case 0x07: try readUnpackInfo(&cursor)
            case 0x08: try readSubStreams(&cursor)
            case let other: throw SevenZipHeader.Failure("unexpected 7z streams property \(other)")
            }
        }
    }

    private mutating func readPackInfo(_ cursor: inout SevenZipCursor) throws {
        packPosition = try cursor.number()
        let count = try cursor.count()
        while true {
            switch try cursor.number() {
            case 0x00: return
            case 0x09: packSizes = try (0..<count).map { _ in try cursor.number() }
            case 0x0A: _ = try cursor.digests(count)
            case let other: throw SevenZipHeader.Failure("unexpected 7z pack property \(other)")
            }
        }
    }

    private mutating func readUnpackInfo(_ cursor: inout SevenZipCursor) throws {
        guard try cursor.number() == 0x0B else { throw SevenZipHeader.Failure("7z unpack info without folders") }
        let count = try cursor.count()
        guard try cursor.byte() == 0 else { throw SevenZipHeader.Failure("7z folders stored outside the header", .unsupportedFormat) }
        var outputs: [Int] = []
        for _ in 0..<count {
            let (folder, totalOut) = try SevenZipStreams.readFolder(&cursor)
            folders.append(folder)
            outputs.append(totalOut)
        }
        guard try cursor.number() == 0x0C else { throw SevenZipHeader.Failure("7z folders without unpack sizes") }
        for index in folders.indices {
            folders[index].unpackSizes = try (0..<outputs[index]).map { _ in try cursor.number() }
        }
        while true {
            switch try cursor.number() {
            case 0x00: return
            case 0x0A:
                for (index, crc) in try cursor.digests(folders.count).enumerated() { folders[index].crc = crc }
            case let other: throw SevenZipHeader.Failure("unexpected 7z unpack property \(other)")
            }
        }
    }

    /// One folder's coders, bind pairs and packed-stream indices; its output count.
    private static func readFolder(_ cursor: inout SevenZipCursor) throws -> (Folder, Int) {
        var folder = Folder()
        var totalIn = 0, totalOut = 0
        let coders = try cursor.count()
        guard coders >= 1, coders <= 64 else { throw SevenZipHeader.Failure("a 7z folder with \(coders) coders") }
        for _ in 0..<coders {
            let flags = try cursor.byte()
            guard flags & 0xC0 == 0 else { throw SevenZipHeader.Failure("a 7z coder with reserved flags") }
            let id = Array(try cursor.take(UInt64(flags & 0x0F)))
            var streamsIn = 1, streamsOut = 1
            if flags & 0x10 != 0 {
                streamsIn = try cursor.count()
                streamsOut = try cursor.count()
                guard streamsIn <= 64, streamsOut <= 64 else { throw SevenZipHeader.Failure("a 7z coder with too many streams") }
            }
            let properties = flags & 0x20 != 0 ? Array(try cursor.take(try cursor.number())) : []
            folder.coders.append(Coder(id: id, properties: properties))
            totalIn += streamsIn
            totalOut += streamsOut
        }
        guard totalOut >= 1, totalIn >= totalOut - 1 else { throw SevenZipHeader.Failure("a 7z folder's streams do not bind") }
        var bound = Set<UInt64>()
        for _ in 0..<(totalOut - 1) { _ = try cursor.number(); bound.insert(try cursor.number()) }
        folder.mainOutput = (0..<totalOut).first { !bound.contains(UInt64($0)) } ?? 0
        let packed = totalIn - (totalOut - 1)
        if packed > 1 { for _ in 0..<packed { _ = try cursor.number() } }
        return (folder, totalOut)
    }

    /// The sub-streams: how many streams each folder unpacks to, their sizes
    /// (all but each folder's last given, the last what remains of the folder's
    /// output) and their CRCs (a folder's own when it holds one stream).
    private mutating func readSubStreams(_ cursor: inout SevenZipCursor) throws {
        var counts = [Int](repeating: 1, count: folders.count)
        var sizes: [[UInt64]]?, digests: [UInt32?]?
        while true {
            switch try cursor.number() {
            case 0x00:
                try settle(counts: counts, sizes: sizes, digests: digests)
                return
            case 0x0D: counts = try folders.indices.map { _ in try cursor.count() }
            case 0x09: sizes = try counts.map { count in try (0..<max(count - 1, 0)).map { _ in try cursor.number() } }
            case 0x0A:
                let unknown = folders.indices.reduce(0) { sum, index in
                    sum + (counts[index] == 1 && folders[index].crc != nil ? 0 : counts[index])
                }
                guard unknown <= cursor.remaining * 8 else { throw SevenZipHeader.Failure("a 7z digest count exceeds its header") }
                digests = try cursor.digests(unknown)
            case let other: throw SevenZipHeader.Failure("unexpected 7z sub-streams property \(other)")
            }
        }
    }

    /// Each stream's size and CRC, in order, from what the sub-streams gave.
    private mutating func settle(counts: [Int], sizes: [[UInt64]]?, digests: [UInt32?]?) throws {
        subStreams = counts.reduce(0, +)
        var unknown = (digests ?? [])[...]
        streams = []
        for (index, folder) in folders.enumerated() where counts[index] > 0 {
            let given = sizes?[index] ?? []
            guard given.count == counts[index] - 1 else { throw SevenZipHeader.Failure("a 7z folder of several streams without their sizes") }
            let (sum, overflow) = given.reduce((UInt64(0), false)) { total, size in
                let next = total.0.addingReportingOverflow(size)
                return (next.partialValue, total.1 || next.overflow)
            }
            guard !overflow, let total = folder.size, sum <= total else { throw SevenZipHeader.Failure("a 7z folder's streams exceed its size") }
            let own = counts[index] == 1 && folder.crc != nil
            for size in given + [total - sum] {
                streams.append((size, own ? folder.crc : (unknown.popFirst() ?? nil)))
            }
        }
    }
}
