import AirlockSystem
import AirlockText

/// One entry's local record (header, name, extra, data, data descriptor), which
/// must say what the central directory says: a streaming reader believes the
/// local header, a seekable one the directory.
enum ZipLocalRecord {
    static let signature: UInt32 = 0x0403_4B50
    static let descriptorSignature: UInt32 = 0x0807_4B50
    /// The flags both headers must share: encryption (0, 6), data descriptor (3), UTF-8 name (11).
    static let sharedFlags: UInt16 = 0x0849

    /// Checks `entry`'s local record against its directory record and sets where
    /// the record ends.
    static func check(_ entry: inout ZipDirectory.Entry, reader: ZipDirectory.Reader) throws(ZipDirectory.Failure) {
        typealias Reader = ZipDirectory.Reader
        let label = EscapedName(entry.name)
        // The fixed header and the name the directory expects, in one read.
        let header = try reader.bytes(at: entry.localHeaderOffset, count: 30 + entry.name.count)
        guard header.u32(0) == signature else { throw .malformed("\(label): no local header where the central directory points") }
        let nameLength = Int(header.u16(26)), extraLength = Int(header.u16(28))
        guard nameLength == entry.name.count, Array(header[30...]) == entry.name else {
            throw .malformed("\(label): local header names another entry")
        }
        guard header.u16(8) == entry.method else { throw .malformed("\(label): local header disagrees on the method") }
        guard header.u16(6) & sharedFlags == entry.flags & sharedFlags else {
            throw .malformed("\(label): local header disagrees on its flags")
        }
        let extraStart = try Reader.sum(entry.localHeaderOffset, 30, Int64(nameLength))
        let extra = ZipExtra(try reader.bytes(at: extraStart, count: extraLength))
        // A streaming reader takes the local Unicode path field, a seekable one the directory's.
        guard try extra.check(name: entry.name) == entry.unicodePath else {
            throw .malformed("\(label): local header and central directory disagree on the Unicode path field")
        }
        if !entry.hasDataDescriptor {
            var sizes = ZipExtra.Sizes(uncompressed: UInt64(header.u32(22)), compressed: UInt64(header.u32(18)), offset: 0, disk: 0)
            try extra.applyZip64(&sizes)
            guard header.u32(14) == entry.crc, sizes.compressed == UInt64(entry.compressedSize),
                  sizes.uncompressed == UInt64(entry.uncompressedSize) else {
                throw .malformed("\(label): local header disagrees on the CRC or the sizes")
            }
        }
        entry.dataOffset = try Reader.sum(extraStart, Int64(extraLength))
        let dataEnd = try Reader.sum(entry.dataOffset, entry.compressedSize)
        var recordEnd = dataEnd
        if entry.hasDataDescriptor {
            recordEnd = try Reader.sum(dataEnd, try descriptorLength(entry, wide: entry.usesZip64 || extra.hasZip64, at: dataEnd, reader: reader))
            if entry.method == 0 { try checkStoredData(entry, from: dataEnd - entry.compressedSize, reader: reader) }
        }
        entry.recordEnd = recordEnd
    }

    /// A stored entry with a data descriptor has no end of its own: a streaming
    /// reader (libarchive's) takes the first descriptor signature in the data for
    /// its end, and what follows for the next entry. So the signature must not
    /// occur in the data.
    private static func checkStoredData(_ entry: ZipDirectory.Entry, from start: Int64, reader: ZipDirectory.Reader) throws(ZipDirectory.Failure) {
        let chunk: Int64 = 64 * 1024
        var offset = start
        let end = start + entry.compressedSize
        while offset < end {
            // Three bytes of overlap, so a signature across two reads is seen.
            let count = Int(min(chunk, end - offset))
            let bytes = try reader.bytes(at: offset, count: count)
            if bytes.count >= 4, (0...(bytes.count - 4)).contains(where: { bytes.u32($0) == descriptorSignature }) {
                throw .malformed("\(EscapedName(entry.name)): stored data holds a data descriptor signature, where a streaming reader would end it")
            }
            offset += Int64(count)
            if offset < end { offset -= 3 }
        }
    }

    /// The data descriptor's length, once its values are found equal to the
    /// directory's. Its signature is optional; its sizes are 8 bytes wide when the
    /// entry has a ZIP64 field, as libarchive reads it.
    private static func descriptorLength(_ entry: ZipDirectory.Entry, wide: Bool, at offset: Int64,
                                         reader: ZipDirectory.Reader) throws(ZipDirectory.Failure) -> Int64 {
        let available = Int(min(24, max(0, reader.size - offset)))
        let bytes = try reader.bytes(at: offset, count: available)
        let base = bytes.count >= 4 && bytes.u32(0) == descriptorSignature ? 4 : 0
        // A streaming reader finds where stored data ends only by the signature.
        guard base == 4 || entry.method != 0 else {
            throw .malformed("\(EscapedName(entry.name)): a stored entry's data descriptor lacks its signature")
        }
        let length = base + (wide ? 20 : 12)
        guard length <= bytes.count else { throw .malformed("\(EscapedName(entry.name)): data descriptor truncated") }
        let compressed = wide ? bytes.u64(base + 4) : UInt64(bytes.u32(base + 4))
        let uncompressed = wide ? bytes.u64(base + 12) : UInt64(bytes.u32(base + 8))
        guard bytes.u32(base) == entry.crc, compressed == UInt64(entry.compressedSize),
              uncompressed == UInt64(entry.uncompressedSize) else {
            throw .malformed("\(EscapedName(entry.name)): data descriptor disagrees with the central directory")
        }
        return Int64(length)
    }
}
