import AirlockFormats

/// A second reader of a tar stream's structure, fed the same decompressed bytes
/// as libarchive's tar reader: it walks the 512-byte blocks from header to
/// header on its own, so that the raw type flag of every entry is known, and it
/// stops at the first end-of-archive block as bsdtar, GNU tar and Python's
/// tarfile do. Everything after that block must be zeros (the padding tar
/// writes to fill its last record): a second archive concatenated behind the
/// first is read by some readers and not by others, so it is corrupt.
package struct TarFraming {
    /// One entry's header as this reader saw it.
    package struct Entry {
        package let kind: TarHeader.Kind
        package let flag: UInt8
        package let typeFlag: String
        /// The data size from the header (a pax `size` record wins), in stored bytes.
        package let size: Int64
        /// The name as the archive's bytes spell it: a pax path, else a GNU long
        /// name, else the header's prefix and name.
        package let name: [UInt8]
        /// A sparse file's size once its holes are filled: the GNU header's
        /// `realsize`, or a pax `GNU.sparse.realsize` (or `.size`) record.
        package let logicalSize: Int64?
    }

    /// Entries seen but not yet matched with one libarchive yielded.
    private(set) var pending: [Entry] = []
    package private(set) var failure: String?
    /// True once the end-of-archive block has gone by.
    package private(set) var ended = false
    /// The first header of a type that yields no entry and that airlock does not
    /// accept: its type flag and name.
    package private(set) var unsupported: (typeFlag: String, name: [UInt8])?

    private enum State {
        case header
        case sparseMap
        /// Bytes of an entry's data (and padding) still to skip.
        case data(Int64)
        /// A pax header's records, kept to find a `size` record.
        case paxRecords(global: Bool, left: Int64)
        /// A GNU long name's (or long link's) data, kept as the entry's name.
        case longName(link: Bool, left: Int64)
        /// The start of a pax sparse 1.0 entry's data, which holds its map:
        /// `size` data bytes, `left` of them and the padding still to come.
        case sparseDataMap(size: Int64, left: Int64)
    }

    private var state = State.header
    private var block: [UInt8] = []
    private var records: [UInt8] = []
    /// The next entry's size from a pax `size` record, if one came.
    private var paxSize: Int64?
    /// A GNU sparse entry's map and sizes, while its continuation blocks go by.
    private var sparseMap = TarSparseMap()
    private var pendingSparseSize: Int64 = 0
    private var pendingRealSize: Int64 = 0
    /// The next entry's logical size from a pax GNU.sparse record, if one came.
    private var paxRealSize: Int64?
    /// The next entry's pax GNU sparse 0.0 or 0.1 map, as text fields.
    private var paxSparseValues: [Substring] = []
    /// Whether the next entry is pax sparse 1.0 (`GNU.sparse.major=1`): its map opens its data.
    private var paxSparseInData = false
    /// The padding after a pax header's records.
    private var padding = 0
    /// The declared size of the GNU long name being read (its padding is read with it).
    private var longNameSize = 0
    /// The headers seen so far that describe the next entry.
    private var extensions: Extensions = []
    /// Whether the last header was one that describes the next (global pax included).
    private var describesNext = false
    /// The next entry's name and link target, as pax and long-name headers give them.
    private var names = TarEntryNames()

    private struct Extensions: OptionSet {
        let rawValue: UInt8
        static let pax = Extensions(rawValue: 1)
        static let longName = Extensions(rawValue: 2)
        static let longLink = Extensions(rawValue: 4)
    }

    package init() {}

    /// pax headers are small; one this large is not something airlock reads.
    static let maxPaxRecords: Int64 = 1 << 20

    /// Takes the next decompressed bytes.
    package mutating func consume(_ chunk: UnsafeRawBufferPointer) {
        var rest = chunk[...]
        while !rest.isEmpty && failure == nil {
            if ended {
                if rest.contains(where: { $0 != 0 }) { fail("data follows the end-of-archive marker") }
                return
            }
            switch state {
            case .data(let left):
                let n = Int(min(left, Int64(rest.count)))
                rest = rest.dropFirst(n)
                state = left - Int64(n) == 0 ? .header : .data(left - Int64(n))
            case .paxRecords(let global, let left):
                let n = Int(min(left, Int64(rest.count)))
                records += rest.prefix(n)
                rest = rest.dropFirst(n)
                // Records may arrive split over chunks: what is left waits for the next.
                if left - Int64(n) == 0 { finishRecords(global: global) } else { state = .paxRecords(global: global, left: left - Int64(n)) }
            case .longName(let link, let left):
                let n = Int(min(left, Int64(rest.count)))
                records += rest.prefix(n)
                rest = rest.dropFirst(n)
                if left - Int64(n) == 0 { finishLongName(link: link) } else { state = .longName(link: link, left: left - Int64(n)) }
            case .sparseDataMap(let size, let left):
                let n = Int(min(left, Int64(rest.count)))
                records += rest.prefix(n)
                rest = rest.dropFirst(n)
                readSparseDataMap(size: size, left: left - Int64(n))
            case .header, .sparseMap:
                let n = min(TarHeader.blockSize - block.count, rest.count)
                block += rest.prefix(n)
                rest = rest.dropFirst(n)
                if block.count == TarHeader.blockSize {
                    let full = block
                    block.removeAll(keepingCapacity: true)
                    full.withUnsafeBytes { take($0) }
                }
            }
        }
    }

    /// Called at the end of the decompressed stream: a stream may end without an
    /// end-of-archive block (every reader accepts that), but not inside one.
    package mutating func finish() {
        guard failure == nil, !ended else { return }
        if describesNext { return fail("an extension header with no entry after it") }
        switch state {
        case .header where block.isEmpty: return
        default: fail("the tar stream ends inside an entry")
        }
    }

    /// The next entry, in the order libarchive yields them.
    package mutating func next() -> Entry? {
        pending.isEmpty ? nil : pending.removeFirst()
    }

    private mutating func fail(_ detail: String) {
        if failure == nil { failure = detail }
    }

    private mutating func take(_ bytes: UnsafeRawBufferPointer) {
        if case .sparseMap = state {
            sparseMap.add(bytes, slots: 21, at: 0)
            if TarHeader.sparseBlockContinues(bytes) { return }
            finishSparseMap()
            return
        }
        let header = TarHeader(bytes: bytes)
        if header.isZero {
            ended = true
            // tarfile fails on a pax or long-name header with no entry after it;
            // libarchive and GNU tar ignore it.
            if describesNext { fail("an extension header with no entry after it") }
            return
        }
        describesNext = false
        guard header.checksumMatches else { return fail("a tar header's checksum does not match") }
        guard let size = header.size else { return fail("a tar header's size field is not a number") }
        guard header.numericFieldsValid else { return fail("a tar header's mode, owner, group, time or device is not a number") }
        // Far beyond any drop airlock admits, and keeps the padding arithmetic exact.
        guard size < 1 << 60 else { return fail("a tar header declares \(size) bytes") }
        if takeExtension(header, size: size) { describesNext = true } else { takeEntry(header, size: size) }
    }

    /// Takes a header that describes the next entry rather than being one; false
    /// for an entry's own header.
    private mutating func takeExtension(_ header: TarHeader, size: Int64) -> Bool {
        switch header.typeFlag {
        case UInt8(ascii: "x"), UInt8(ascii: "X"), UInt8(ascii: "g"):
            // 'X' is Solaris's name for a pax header, and libarchive reads it as one.
            let global = header.typeFlag == UInt8(ascii: "g")
            guard size <= TarFraming.maxPaxRecords else { fail("a pax header of \(size) bytes"); return true }
            // Readers differ on which of two pax headers for one entry wins.
            if !global && extensions.contains(.pax) { fail("two pax headers for one entry"); return true }
            if !global { extensions.insert(.pax) }
            records.removeAll(keepingCapacity: true)
            padding = TarFraming.padding(size)
            if size == 0 { finishRecords(global: global) } else { state = .paxRecords(global: global, left: size) }
        case UInt8(ascii: "L"), UInt8(ascii: "K"):
            let which: Extensions = header.typeFlag == UInt8(ascii: "L") ? .longName : .longLink
            guard size <= TarFraming.maxPaxRecords else { fail("a long-name header of \(size) bytes"); return true }
            if extensions.contains(which) { fail("two GNU long-name headers for one entry"); return true }
            extensions.insert(which)
            records.removeAll(keepingCapacity: true)
            // The padding is read with the name: tarfile and GNU tar read whole
            // blocks and cut the name at its first NUL, libarchive at the size.
            longNameSize = Int(size)
            let whole = size + Int64(TarFraming.padding(size))
            if whole == 0 { finishLongName(link: which == .longLink) } else { state = .longName(link: which == .longLink, left: whole) }
        case UInt8(ascii: "A"), UInt8(ascii: "V"):
            // A Solaris ACL or a GNU volume label: libarchive applies or skips it
            // without yielding an entry, Python's tarfile extracts it as a file,
            // and airlock can honour neither.
            if unsupported == nil { unsupported = (header.typeFlagText, header.name) }
            state = dataState(size)
        default:
            return false
        }
        return true
    }

    private mutating func takeEntry(_ header: TarHeader, size headerSize: Int64) {
        let kind = header.kind
        let size = paxSize ?? headerSize
        let used = extensions
        let logical = kind == .gnuSparse ? header.gnuRealSize : paxRealSize
        let paxMap = paxSparseValues
        let mapInData = paxSparseInData && kind == .file
        paxSparseInData = false
        paxSize = nil
        paxRealSize = nil
        paxSparseValues = []
        extensions = []
        let named = names.resolve(header)
        pending.append(Entry(kind: kind, flag: header.typeFlag, typeFlag: header.typeFlagText, size: size,
                             name: named.name, logicalSize: logical))
        if let problem = named.problem { return fail(problem) }
        // pax extends ustar; the sparse fields exist only under the GNU magic.
        if used.contains(.pax) && !header.isPosixUstar { return fail("a pax header is followed by a non-ustar header") }
        if kind == .gnuSparse && !header.isGnu { return fail("a GNU sparse entry without the GNU magic") }
        if !paxMap.isEmpty {
            // A pax 0.0 or 0.1 sparse map: its regions must add up to the data stored.
            var map = TarSparseMap()
            map.add(paxNumbers: paxMap)
            map.finish(stored: size, logical: logical ?? 0)
            if let problem = map.failure { return fail(problem) }
        }
        // tarfile reads bytes 345 on of any header as a name prefix, libarchive and
        // GNU tar only in POSIX ustar headers; libarchive applies a GNU header's
        // sparse fields whatever its type, tarfile and GNU tar only to type 'S'.
        if header.unsharedFields(sparse: kind == .gnuSparse).contains(where: { header.bytes[$0].contains { $0 != 0 } }) {
            return fail("a tar header has fields only some readers read")
        }
        switch kind {
        case .file, .gnuSparse, .unknown:
            break
        default:
            // POSIX stores no data for links, directories and special files; readers
            // that skip a size here and readers that honour it would part ways.
            guard size == 0 else { return fail("a \(header.typeFlagText) entry declares \(size) bytes of data") }
        }
        if kind == .gnuSparse {
            guard let logical else { return fail("a GNU sparse entry's real size is not a number") }
            sparseMap = TarSparseMap()
            sparseMap.add(header.bytes, slots: 4, at: 386)
            pendingSparseSize = size
            pendingRealSize = logical
            if header.gnuSparseContinues { state = .sparseMap } else { finishSparseMap() }
        } else if mapInData {
            records.removeAll(keepingCapacity: true)
            pendingRealSize = logical ?? 0
            state = .sparseDataMap(size: size, left: size + Int64(TarFraming.padding(size)))
            if size == 0 { readSparseDataMap(size: 0, left: 0) }
        } else {
            state = dataState(size)
        }
    }

    /// Reads a pax sparse 1.0 map from the start of its entry's data, once
    /// enough has come: a count, then an offset and a length per region, each
    /// a decimal line, padded to a block. Its regions must add up to the data
    /// after it, as with every other map (`TarSparseMap`); readers were seen to
    /// fill a map that claims more differently (bsdtar, and GNU tar with tarfile).
    private mutating func readSparseDataMap(size: Int64, left: Int64) {
        var lines: [Substring] = []
        var used = 0
        let text = Substring(String(decoding: records.prefix(Int(min(Int64(records.count), size))), as: UTF8.self))
        var rest = text
        while let newline = rest.firstIndex(of: "\n") {
            lines.append(rest[rest.startIndex..<newline])
            used += rest.distance(from: rest.startIndex, to: newline) + 1
            rest = rest[rest.index(after: newline)...]
            if let count = lines.first.flatMap({ Int($0) }), lines.count == 1 + 2 * count { break }
        }
        guard let first = lines.first, let count = Int(first), count >= 0, lines.count == 1 + 2 * count,
              lines.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }) else {
            // Not whole yet: wait for more, unless no more of the map can come.
            if records.count >= TarFraming.maxPaxRecords || Int64(records.count) >= size || left == 0 {
                return fail("a pax sparse 1.0 map is malformed or does not fit its entry")
            }
            return state = .sparseDataMap(size: size, left: left)
        }
        let mapBytes = Int64(used) + Int64(TarFraming.padding(Int64(used)))
        guard mapBytes <= size else { return fail("a pax sparse 1.0 map runs past its entry's data") }
        var map = TarSparseMap()
        map.add(paxNumbers: Array(lines.dropFirst()))
        map.finish(stored: size - mapBytes, logical: pendingRealSize)
        if let problem = map.failure { return fail(problem) }
        state = left == 0 ? .header : .data(left)
    }

    private mutating func finishSparseMap() {
        sparseMap.finish(stored: pendingSparseSize, logical: pendingRealSize)
        if let problem = sparseMap.failure { return fail(problem) }
        state = dataState(pendingSparseSize)
    }

    private func dataState(_ size: Int64) -> State {
        let total = size + Int64(TarFraming.padding(size))
        return total == 0 ? .header : .data(total)
    }

    static func padding(_ size: Int64) -> Int {
        Int((Int64(TarHeader.blockSize) - size % Int64(TarHeader.blockSize)) % Int64(TarHeader.blockSize))
    }

    /// Reads a pax header's records for what decides how the stream is read
    /// (`size`) and what readers disagree on (`path` beside a long name). A
    /// global header may set none of them: readers differ on whether it applies
    /// to the entries that follow.
    private mutating func finishRecords(global: Bool) {
        var rest = records[...]
        while !rest.isEmpty {
            guard let space = rest.firstIndex(of: 0x20),
                  let length = Int(String(decoding: rest[rest.startIndex..<space], as: UTF8.self)),
                  length > space - rest.startIndex + 1, length <= rest.count,
                  rest[rest.startIndex + length - 1] == 0x0A else {
                return fail("a pax header's records are malformed")
            }
            let record = rest[(space + 1)..<(rest.startIndex + length - 1)]
            let equals = record.firstIndex(of: UInt8(ascii: "=")) ?? record.endIndex
            let key = String(decoding: record[record.startIndex..<equals], as: UTF8.self)
            if global && ["size", "path", "linkpath"].contains(key) { return fail("a global pax header sets \(key)") }
            if !global, let problem = names.takePax(key: key, value: record[(min(equals + 1, record.endIndex))...]) {
                return fail(problem)
            }
            if key == "GNU.sparse.map" {
                paxSparseValues += String(decoding: record[(equals + 1)...], as: UTF8.self).split(separator: ",",
                                                                                                  omittingEmptySubsequences: false)
            }
            if key == "GNU.sparse.offset" || key == "GNU.sparse.numbytes" {
                paxSparseValues.append(Substring(String(decoding: record[(equals + 1)...], as: UTF8.self)))
            }
            if key == "GNU.sparse.major" { paxSparseInData = String(decoding: record[(equals + 1)...], as: UTF8.self) == "1" }
            if key == "GNU.sparse.realsize" || key == "GNU.sparse.size" {
                let value = String(decoding: record[(equals + 1)...], as: UTF8.self)
                guard let size = Int64(value), size >= 0, value.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    return fail("a pax sparse size record is not a number")
                }
                paxRealSize = size
            }
            if key == "size" {
                let value = String(decoding: record[(equals + 1)...], as: UTF8.self)
                guard let size = Int64(value), size >= 0, size < 1 << 60, value.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                    return fail("a pax size record is not a number")
                }
                paxSize = size
            }
            rest = rest[(rest.startIndex + length)...]
        }
        skipPadding()
    }

    /// Takes a GNU long name's data once it has all gone by.
    private mutating func finishLongName(link: Bool) {
        let name = records.prefix(longNameSize)
        if !name.contains(0), records.count > longNameSize, records[longNameSize] != 0 {
            return fail("a GNU long name goes on past its declared size in its block")
        }
        if let problem = names.takeLong(Array(name), link: link) { return fail(problem) }
        state = .header
    }

    private mutating func skipPadding() {
        let skip = Int64(padding)
        padding = 0
        state = skip == 0 ? .header : .data(skip)
    }
}
