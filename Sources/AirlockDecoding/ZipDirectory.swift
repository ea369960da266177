import AirlockPolicy
import AirlockSystem

/// A ZIP archive's central directory, read and cross-checked by airlock itself
/// before libarchive extracts a byte.
///
/// libarchive hands back names as C strings (a NUL inside a name is lost) and does
/// not expose where each entry's data lies, so the overlap of entries that share
/// data (the "overlapping files" bomb) is found here. Every local header is read
/// too and must agree with its directory record.
public struct ZipDirectory: Sendable {
    public struct Entry: Sendable {
        public let name: [UInt8]
        public let flags: UInt16
        public let method: UInt16
        public let compressedSize: Int64
        public let uncompressedSize: Int64
        public let localHeaderOffset: Int64
        /// Where the entry's data ends (its local header, name, extra and data).
        public var dataEnd: Int64 = 0
        public let madeByUnix: Bool
        public let externalAttributes: UInt32

        public var isEncrypted: Bool { flags & 0x0001 != 0 || flags & 0x0040 != 0 || method == 99 }
        public var isDirectoryName: Bool { name.last == UInt8(ascii: "/") }

        /// The entry's type from the Unix mode in the external attributes, if any.
        public var unixType: UInt32? {
            guard madeByUnix else { return nil }
            let type = (externalAttributes >> 16) & 0o170000
            return type == 0 ? nil : type
        }
    }

    public let entries: [Entry]

    public struct Malformed: Error, Sendable {
        public let detail: String
        /// Set when the directory is well-formed but lists more entries than the
        /// policy allows: it is then not read further.
        public let declaredEntries: Int64?
        public init(_ detail: String, declaredEntries: Int64? = nil) {
            self.detail = detail
            self.declaredEntries = declaredEntries
        }
    }

    /// Reads the end record, the central directory and every local header of the
    /// ZIP file open at `file`, `fileSize` bytes long.
    public init(file: FileDescriptor, fileSize: Int64, maxEntries: Int) throws(Malformed) {
        let reader = Reader(file: file, size: fileSize)
        let end = try ZipDirectory.findEnd(reader)
        guard end.entryCount <= Int64(maxEntries) else {
            // Past the limit: the count alone rejects, so a huge directory is never read.
            throw Malformed("the central directory lists \(end.entryCount) entries", declaredEntries: end.entryCount)
        }
        guard end.directoryOffset >= 0, end.directorySize >= 0,
              end.directoryOffset + end.directorySize == end.directoryEnd else {
            throw Malformed("central directory does not end where the end record begins")
        }
        // The whole directory in one read, then parsed from memory.
        let directory = try reader.bytes(at: end.directoryOffset, count: Int(end.directorySize))
        var cursor = 0
        var entries: [Entry] = []
        entries.reserveCapacity(Int(end.entryCount))
        for _ in 0..<end.entryCount {
            guard cursor + 46 <= directory.count, directory.u32(cursor) == 0x0201_4B50 else {
                throw Malformed("bad central directory record signature")
            }
            let nameLength = Int(directory.u16(cursor + 28)), extraLength = Int(directory.u16(cursor + 30))
            let commentLength = Int(directory.u16(cursor + 32))
            guard cursor + 46 + nameLength + extraLength + commentLength <= directory.count else {
                throw Malformed("a central directory record overruns the directory")
            }
            let name = Array(directory[(cursor + 46)..<(cursor + 46 + nameLength)])
            let extra = Array(directory[(cursor + 46 + nameLength)..<(cursor + 46 + nameLength + extraLength)])
            var compressed = Int64(directory.u32(cursor + 20)), uncompressed = Int64(directory.u32(cursor + 24))
            var offset = Int64(directory.u32(cursor + 42))
            try ZipDirectory.applyZip64(extra, uncompressed: &uncompressed, compressed: &compressed, offset: &offset)
            entries.append(Entry(
                name: name, flags: directory.u16(cursor + 8), method: directory.u16(cursor + 10),
                compressedSize: compressed, uncompressedSize: uncompressed, localHeaderOffset: offset,
                madeByUnix: directory.u16(cursor + 4) >> 8 == 3, externalAttributes: directory.u32(cursor + 38)))
            cursor += 46 + nameLength + extraLength + commentLength
        }
        guard Int64(cursor) == end.directorySize else { throw Malformed("central directory size disagrees with its records") }
        for index in entries.indices {
            try ZipDirectory.checkLocalHeader(&entries[index], reader: reader, directoryOffset: end.directoryOffset)
        }
        let byOffset = entries.sorted { $0.localHeaderOffset < $1.localHeaderOffset }
        for (previous, next) in zip(byOffset, byOffset.dropFirst()) where next.localHeaderOffset < previous.dataEnd {
            throw Malformed("entries overlap: \(EscapedName(previous.name)) and \(EscapedName(next.name)) share bytes")
        }
        self.entries = entries
    }

    private struct End {
        var entryCount: Int64
        var directorySize: Int64
        var directoryOffset: Int64
        /// Offset of the record that follows the directory (ZIP64 end record or end record).
        var directoryEnd: Int64
    }

    private static func findEnd(_ reader: Reader) throws(Malformed) -> End {
        guard reader.size >= 22 else { throw Malformed("too short for a ZIP end record") }
        let window = min(reader.size, 22 + 65535)
        let tail = try reader.bytes(at: reader.size - window, count: Int(window))
        var position = tail.count - 22
        while position >= 0 {
            if tail.u32(position) == 0x0605_4B50 && position + 22 + Int(tail.u16(position + 20)) == tail.count {
                break
            }
            position -= 1
        }
        guard position >= 0 else { throw Malformed("no end of central directory record (truncated?)") }
        let endOffset = reader.size - window + Int64(position)
        guard tail.u16(position + 4) == 0, tail.u16(position + 6) == 0 else { throw Malformed("multi-disk archive") }
        var result = End(
            entryCount: Int64(tail.u16(position + 10)), directorySize: Int64(tail.u32(position + 12)),
            directoryOffset: Int64(tail.u32(position + 16)), directoryEnd: endOffset)
        // A ZIP64 locator sits 20 bytes before the end record.
        if endOffset >= 20, try reader.bytes(at: endOffset - 20, count: 4).u32(0) == 0x0706_4B50 {
            let locator = try reader.bytes(at: endOffset - 20, count: 20)
            let zip64Offset = Int64(bitPattern: locator.u64(8))
            guard zip64Offset >= 0, zip64Offset + 56 <= endOffset - 20 else { throw Malformed("bad ZIP64 locator") }
            let record = try reader.bytes(at: zip64Offset, count: 56)
            guard record.u32(0) == 0x0606_4B50 else { throw Malformed("bad ZIP64 end record signature") }
            let recordSize = Int64(bitPattern: record.u64(4))
            guard recordSize >= 44, zip64Offset + 12 + recordSize == endOffset - 20 else {
                throw Malformed("ZIP64 end record size is inconsistent")
            }
            result = End(
                entryCount: Int64(bitPattern: record.u64(32)), directorySize: Int64(bitPattern: record.u64(40)),
                directoryOffset: Int64(bitPattern: record.u64(48)), directoryEnd: zip64Offset)
        }
        return result
    }

    private static func applyZip64(_ extra: [UInt8], uncompressed: inout Int64, compressed: inout Int64, offset: inout Int64) throws(Malformed) {
        var position = 0
        while position + 4 <= extra.count {
            let id = extra.u16(position), length = Int(extra.u16(position + 2))
            guard position + 4 + length <= extra.count else { throw Malformed("extra field overruns its record") }
            if id == 0x0001 {
                var field = position + 4
                func next() throws(Malformed) -> Int64 {
                    guard field + 8 <= position + 4 + length else { throw Malformed("ZIP64 extra field too short") }
                    defer { field += 8 }
                    let value = Int64(bitPattern: extra.u64(field))
                    guard value >= 0 else { throw Malformed("ZIP64 size out of range") }
                    return value
                }
                if uncompressed == 0xFFFF_FFFF { uncompressed = try next() }
                if compressed == 0xFFFF_FFFF { compressed = try next() }
                if offset == 0xFFFF_FFFF { offset = try next() }
            }
            position += 4 + length
        }
    }

    private static func checkLocalHeader(_ entry: inout Entry, reader: Reader, directoryOffset: Int64) throws(Malformed) {
        // The fixed header and the name the directory expects, in one read.
        let header = try reader.bytes(at: entry.localHeaderOffset, count: 30 + entry.name.count)
        guard header.u32(0) == 0x0403_4B50 else {
            throw Malformed("\(EscapedName(entry.name)): no local header where the central directory points")
        }
        let nameLength = Int64(header.u16(26)), extraLength = Int64(header.u16(28))
        guard nameLength == Int64(entry.name.count), Array(header[30...]) == entry.name else {
            throw Malformed("\(EscapedName(entry.name)): local header names another entry")
        }
        guard header.u16(8) == entry.method else { throw Malformed("\(EscapedName(entry.name)): local header disagrees on the method") }
        guard (header.u16(6) & 0x0041) == (entry.flags & 0x0041) else {
            throw Malformed("\(EscapedName(entry.name)): local header disagrees on encryption")
        }
        entry.dataEnd = entry.localHeaderOffset + 30 + nameLength + extraLength + entry.compressedSize
        guard entry.dataEnd <= directoryOffset else {
            throw Malformed("\(EscapedName(entry.name)): data runs into the central directory")
        }
    }

    /// Bounded positional reads of the drop.
    private struct Reader {
        let file: FileDescriptor
        let size: Int64

        func bytes(at offset: Int64, count: Int) throws(Malformed) -> [UInt8] {
            guard offset >= 0, count >= 0, offset + Int64(count) <= size else {
                throw Malformed("a record points past the end of the file")
            }
            var buffer = [UInt8](repeating: 0, count: count)
            let result = buffer.withUnsafeMutableBytes { b in
                Result { () throws(SystemError) in try file.read(into: b, at: offset) }
            }
            guard case .success(let got) = result else {
                throw Malformed("reading the archive failed")
            }
            guard got == count else { throw Malformed("the file ended early") }
            return buffer
        }
    }
}

extension Array where Element == UInt8 {
    func u16(_ at: Int) -> UInt16 { UInt16(self[at]) | UInt16(self[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
    func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
}
