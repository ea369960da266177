import AirlockSystem
import AirlockText

/// One entry's local record (header, name, extra, data, data descriptor), which
/// must say what the central directory says: a streaming reader believes the
/// local header, a seekable one the directory.
enum ZipLocalRecord {
    static let signature: UInt32 = 0x0403_4B50
    static let descriptorSignature: UInt32 = 0x0807_4B50
    /// The flags both headers must share: encryption (0, 6), data descriptor (3)
    /// and patched data (5, which the directory record may not have either).
    /// Not the UTF-8 flag (11): it says how a name's bytes decode, and the two
    /// names are compared decoded.
    static let sharedFlags: UInt16 = 0x0069

    /// Checks `entry`'s local record against its directory record and sets where
    /// the record ends, and the name libarchive yields (the local header's).
    ///
    /// The two headers may spell the name in different bytes (a code page in
    /// the directory, a Unicode path field in the local header) as long as
    /// every reader decodes them to the same name: unzip and zipfile read the
    /// directory's, a streaming reader the local header's.
    static func check(_ entry: inout ZipDirectory.Entry, reader: ZipDirectory.Reader, names: TextConverter) throws(ZipDirectory.Failure) {
        typealias Reader = ZipDirectory.Reader
        let label = EscapedName(entry.name)
        let fixed = try reader.bytes(at: entry.localHeaderOffset, count: 30)
        guard fixed.u32(0) == signature else { throw .malformed("\(label): no local header where the central directory points") }
        let nameLength = Int(fixed.u16(26)), extraLength = Int(fixed.u16(28))
        let header = try reader.bytes(at: entry.localHeaderOffset, count: 30 + nameLength)
        let localName = Array(header[30...])
        guard header.u16(8) == entry.method else { throw .malformed("\(label): local header disagrees on the method") }
        guard header.u16(6) & sharedFlags == entry.flags & sharedFlags else {
            throw .malformed("\(label): local header disagrees on its flags")
        }
        let extraStart = try Reader.sum(entry.localHeaderOffset, 30, Int64(nameLength))
        let extra = ZipExtra(try reader.bytes(at: extraStart, count: extraLength))
        let localUnicode = try extra.check(name: localName)
        if localName != entry.name || localUnicode != entry.unicodePath || header.u16(6) & 0x0800 != entry.flags & 0x0800 {
            let local = try ZipName.resolve(stored: localName, flags: header.u16(6), unicode: localUnicode, converter: names)
            guard local.landing == entry.landingName else {
                throw .malformed("\(label): local header names another entry, \(EscapedName(local.landing))")
            }
            entry.key = local.key
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
            let descriptor = try descriptor(entry, wide: entry.usesZip64 || extra.hasZip64, at: dataEnd, reader: reader)
            recordEnd = try Reader.sum(dataEnd, descriptor.length)
            if entry.method == 0 {
                if let found = try firstSignature(from: entry.dataOffset, to: dataEnd, reader: reader) {
                    throw .malformed("\(label): stored data holds a data descriptor signature (at byte \(found)),"
                        + " where a streaming reader would end it")
                }
                entry.storedWithoutSignature = !descriptor.signed
            }
        }
        entry.recordEnd = recordEnd
    }

    /// A stored entry whose data descriptor has no signature is unambiguous to a
    /// reader of the central directory (its sizes say where the data ends, and
    /// the descriptor there repeats them and the CRC). A streaming reader has no
    /// end for it but a signature it scans for, past the data and the descriptor
    /// into the entries that follow: so no descriptor signature may follow it
    /// anywhere before the directory, and such a reader finds no end and fails
    /// rather than reading another entry.
    static func checkUnsigned(_ entries: [ZipDirectory.Entry], directoryOffset: Int64,
                              reader: ZipDirectory.Reader) throws(ZipDirectory.Failure) {
        guard let first = entries.filter(\.storedWithoutSignature).min(by: { $0.dataOffset < $1.dataOffset }) else { return }
        if let found = try firstSignature(from: first.dataOffset, to: directoryOffset, reader: reader) {
            throw .malformed("\(EscapedName(first.name)): its data descriptor has no signature, and a streaming reader"
                + " would take the one at byte \(found) for its end")
        }
    }

    /// Where the first data descriptor signature lies in the bytes from `start` up to `end`, if anywhere.
    private static func firstSignature(from start: Int64, to end: Int64, reader: ZipDirectory.Reader) throws(ZipDirectory.Failure) -> Int64? {
        let chunk: Int64 = 64 * 1024
        var offset = start
        while offset < end {
            // Three bytes of overlap, so a signature across two reads is seen.
            let count = Int(min(chunk, end - offset))
            let bytes = try reader.bytes(at: offset, count: count)
            if bytes.count >= 4, let at = (0...(bytes.count - 4)).first(where: { bytes.u32($0) == descriptorSignature }) {
                return offset + Int64(at)
            }
            offset += Int64(count)
            if offset < end { offset -= 3 }
        }
        return nil
    }

    /// The data descriptor's length and whether it has its signature, once its
    /// values are found equal to the directory's. Its signature is optional (a
    /// descriptor whose CRC is the signature's value is read as signed); its
    /// sizes are 8 bytes wide when the entry has a ZIP64 field, as libarchive
    /// reads it.
    private static func descriptor(_ entry: ZipDirectory.Entry, wide: Bool, at offset: Int64,
                                   reader: ZipDirectory.Reader) throws(ZipDirectory.Failure) -> (length: Int64, signed: Bool) {
        let available = Int(min(24, max(0, reader.size - offset)))
        let bytes = try reader.bytes(at: offset, count: available)
        let base = bytes.count >= 4 && bytes.u32(0) == descriptorSignature ? 4 : 0
        let length = base + (wide ? 20 : 12)
        guard length <= bytes.count else { throw .malformed("\(EscapedName(entry.name)): data descriptor truncated") }
        let compressed = wide ? bytes.u64(base + 4) : UInt64(bytes.u32(base + 4))
        let uncompressed = wide ? bytes.u64(base + 12) : UInt64(bytes.u32(base + 8))
        guard bytes.u32(base) == entry.crc, compressed == UInt64(entry.compressedSize),
              uncompressed == UInt64(entry.uncompressedSize) else {
            throw .malformed("\(EscapedName(entry.name)): data descriptor disagrees with the central directory")
        }
        return (Int64(length), base == 4)
    }
}
