/// Where a ZIP's central directory lies, from its end records, read so that no
/// other reader can find a different directory in the same bytes.
///
/// Readers look for the end record differently: libarchive takes the last
/// signature in the file's final 16 KiB whatever its comment length, Python's
/// zipfile the last in the final 64 KiB, airlock the one whose comment ends at the
/// end of the file. So exactly one record must fit: its comment reaches the end of
/// the file and holds no second signature, which a reader could take for the
/// record (an archive hidden in the comment).
struct ZipEndRecords {
    var entryCount: Int64
    var directorySize: Int64
    var directoryOffset: Int64
    /// Offset of the first record after the directory (ZIP64 end record or end record).
    var directoryEnd: Int64

    static let signature: UInt32 = 0x0605_4B50
    static let zip64Signature: UInt32 = 0x0606_4B50
    static let locatorSignature: UInt32 = 0x0706_4B50

    init(_ reader: ZipDirectory.Reader) throws(ZipDirectory.Failure) {
        guard reader.size >= 22 else { throw .malformed("too short for a ZIP end record") }
        let window = min(reader.size, 22 + 65535)
        let tail = try reader.bytes(at: reader.size - window, count: Int(window))
        let candidates = (0...(tail.count - 22)).filter {
            tail.u32($0) == ZipEndRecords.signature && $0 + 22 + Int(tail.u16($0 + 20)) == tail.count
        }
        guard let position = candidates.first else { throw .malformed("no end record whose comment ends at the end of the file (truncated, or bytes after the archive)") }
        guard candidates.count == 1 else {
            throw .malformed("\(candidates.count) end records fit the end of the file: readers would disagree on the directory")
        }
        if (position + 1..<(tail.count - 3)).contains(where: { tail.u32($0) == ZipEndRecords.signature }) {
            throw .malformed("the archive comment holds another end record signature")
        }
        let endOffset = reader.size - window + Int64(position)
        let record = Array(tail[position..<(position + 22)])
        if endOffset >= 20, try reader.bytes(at: endOffset - 20, count: 4).u32(0) == ZipEndRecords.locatorSignature {
            self = try ZipEndRecords.zip64(reader, record: record, locatorOffset: endOffset - 20)
        } else {
            guard record.u16(4) == 0, record.u16(6) == 0 else { throw .malformed("multi-disk archive") }
            guard record.u16(8) == record.u16(10) else { throw .malformed("the end record's entry counts disagree") }
            self.init(entryCount: Int64(record.u16(10)), directorySize: Int64(record.u32(12)),
                      directoryOffset: Int64(record.u32(16)), directoryEnd: endOffset)
        }
        let directoryStop = try ZipDirectory.Reader.sum(directoryOffset, directorySize)
        guard directoryStop == directoryEnd else {
            // Short of the end records: the offsets were written for a file without the
            // bytes that now precede it (a self-extractor stub), or bytes follow the directory.
            if directoryStop < directoryEnd {
                throw .malformed("\(directoryEnd - directoryStop) bytes before the archive or after its directory that no entry accounts for")
            }
            throw .malformed("the central directory runs past the end records")
        }
    }

    private init(entryCount: Int64, directorySize: Int64, directoryOffset: Int64, directoryEnd: Int64) {
        self.entryCount = entryCount
        self.directorySize = directorySize
        self.directoryOffset = directoryOffset
        self.directoryEnd = directoryEnd
    }

    /// The ZIP64 end record and its locator. The traditional record may hold the
    /// placeholders (0xFFFF, 0xFFFFFFFF) that ZIP64 writers leave, disk numbers
    /// included, or the true values; any other value would make a reader that
    /// trusts the traditional record see another directory.
    private static func zip64(_ reader: ZipDirectory.Reader, record: [UInt8], locatorOffset: Int64) throws(ZipDirectory.Failure) -> ZipEndRecords {
        typealias Reader = ZipDirectory.Reader
        let locator = try reader.bytes(at: locatorOffset, count: 20)
        // libarchive ignores a locator that names another disk or a disk count
        // other than one, and would then read the traditional record instead.
        guard locator.u32(4) == 0, locator.u32(16) == 1 else { throw .malformed("multi-disk archive (ZIP64 locator)") }
        let offset = try Reader.int64(locator.u64(8), "the ZIP64 end record offset")
        // Python's zipfile finds the ZIP64 record 56 bytes before the locator, not
        // where the locator points: both must be the same place.
        guard try Reader.sum(offset, 56) == locatorOffset else { throw .malformed("the ZIP64 end record is not where its locator points") }
        let zip64 = try reader.bytes(at: offset, count: 56)
        guard zip64.u32(0) == zip64Signature else { throw .malformed("bad ZIP64 end record signature") }
        guard zip64.u64(4) == 44 else { throw .malformed("ZIP64 end record size is inconsistent") }
        guard zip64.u32(16) == 0, zip64.u32(20) == 0 else { throw .malformed("multi-disk archive (ZIP64 end record)") }
        guard zip64.u64(24) == zip64.u64(32) else { throw .malformed("the ZIP64 end record's entry counts disagree") }
        let result = ZipEndRecords(
            entryCount: try Reader.int64(zip64.u64(32), "the ZIP64 entry count"),
            directorySize: try Reader.int64(zip64.u64(40), "the ZIP64 directory size"),
            directoryOffset: try Reader.int64(zip64.u64(48), "the ZIP64 directory offset"), directoryEnd: offset)
        func agrees(_ value: UInt64, _ placeholder: UInt64, _ actual: Int64) -> Bool {
            value == placeholder || value == UInt64(actual)
        }
        guard agrees(UInt64(record.u16(4)), 0xFFFF, 0), agrees(UInt64(record.u16(6)), 0xFFFF, 0),
              agrees(UInt64(record.u16(8)), 0xFFFF, result.entryCount), agrees(UInt64(record.u16(10)), 0xFFFF, result.entryCount),
              agrees(UInt64(record.u32(12)), 0xFFFF_FFFF, result.directorySize),
              agrees(UInt64(record.u32(16)), 0xFFFF_FFFF, result.directoryOffset) else {
            throw .malformed("the end record disagrees with the ZIP64 end record")
        }
        return result
    }
}
