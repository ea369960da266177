import AirlockFormats
import AirlockText

/// An ISO 9660 image's directory trees (the primary one and a Joliet one),
/// walked by airlock itself beside libarchive.
///
/// Every number in a directory record is stored twice, little- and big-endian;
/// libarchive reads one order, 7-Zip refuses a record whose two disagree, and
/// other systems read the other: they must agree. And readers pick different
/// trees: libarchive takes Rock Ridge names where the image has them, else
/// Joliet's; 7-Zip and Windows take Joliet's. So where an image has a Joliet
/// tree, the files libarchive yields (path and size) must be exactly its files,
/// or a name or a file seen by one reader is not seen by the other.
struct IsoDirectories {
    typealias Reader = ZipDirectory.Reader
    typealias Failure = ZipDirectory.Failure

    /// The Joliet tree's files, by path, with their sizes; nil without a Joliet descriptor.
    private(set) var joliet: [ZipDirectory.NameKey: Int64]?
    private var records = 0
    private static let maxRecords = 200_000

    init(_ reader: Reader) throws(Failure) {
        var sector = ArchiveFormat.isoDescriptorOffset
        for _ in 0..<64 {
            guard sector + 2048 <= reader.size else { break }
            let descriptor = try reader.bytes(at: sector, count: 2048)
            guard ArchiveFormat.isISO9660Descriptor(descriptor), descriptor[0] != 255 else { break }
            let isJoliet = descriptor[0] == 2 && descriptor[88] == 0x25 && descriptor[89] == 0x2F
                && [0x40, 0x43, 0x45].contains(descriptor[90])
            if descriptor[0] == 1 || isJoliet {
                let files = try walk(reader, root: Array(descriptor[156..<190]), blockSize: Int64(descriptor.u16(128)), joliet: isJoliet)
                if isJoliet && joliet == nil { joliet = files }
            }
            sector += 2048
        }
    }

    /// Every directory beneath `root`, breadth first, each extent once; the files' paths and sizes.
    private mutating func walk(_ reader: Reader, root: [UInt8], blockSize: Int64,
                               joliet: Bool) throws(Failure) -> [ZipDirectory.NameKey: Int64] {
        guard blockSize > 0 else { throw .malformed("a volume descriptor's logical block size is 0") }
        let (rootExtent, rootSize) = try IsoDirectories.checked(root)
        var queue: [(extent: Int64, size: Int64, path: String)] = [(rootExtent, rootSize, "")]
        var visited: Set<Int64> = []
        var files: [ZipDirectory.NameKey: Int64] = [:]
        while let directory = queue.popLast() {
            guard visited.insert(directory.extent).inserted else { continue }
            let start = try Reader.sum(directory.extent * blockSize)
            guard directory.size <= 16 << 20, start + directory.size <= reader.size else {
                throw .malformed("a directory's extent lies past the end of the image")
            }
            let bytes = try reader.bytes(at: start, count: Int(directory.size))
            var offset = 0
            while offset < bytes.count {
                let length = Int(bytes[offset])
                if length == 0 {
                    // libarchive skips to the next sector, 7-Zip reads on byte by byte: only zeros may lie between.
                    let next = min((offset / 2048 + 1) * 2048, bytes.count)
                    guard bytes[offset..<next].allSatisfy({ $0 == 0 }) else {
                        throw .malformed("a directory holds bytes after its padding in a sector (7-Zip reads records there, libarchive skips them)")
                    }
                    offset = next
                    continue
                }
                guard length >= 34, offset + length <= bytes.count else { throw .malformed("a directory record overruns its directory") }
                records += 1
                guard records <= IsoDirectories.maxRecords else { throw .malformed("more than \(IsoDirectories.maxRecords) directory records") }
                let record = Array(bytes[offset..<(offset + length)])
                offset += length
                let (extent, size) = try IsoDirectories.checked(record)
                let nameLength = Int(record[32])
                guard 33 + nameLength <= length else { throw .malformed("a directory record's name overruns it") }
                let raw = Array(record[33..<(33 + nameLength)])
                if raw == [0] || raw == [1] { continue }
                let name = joliet ? IsoDirectories.joliet(raw) : ""
                let path = directory.path.isEmpty ? name : directory.path + "/" + name
                if record[25] & 0x02 != 0 {
                    queue.insert((extent, size, path), at: 0)
                } else if joliet {
                    files[ZipDirectory.NameKey(Array(path.utf8)), default: 0] += size
                }
            }
        }
        return files
    }

    /// A directory record's extent and data length, once their two byte orders
    /// (and the volume sequence number's) are found to agree.
    private static func checked(_ record: [UInt8]) throws(Failure) -> (Int64, Int64) {
        guard record.count >= 34 else { throw .malformed("a directory record is cut short") }
        guard record.u32(2) == record.u32BigEndian(6), record.u32(10) == record.u32BigEndian(14),
              UInt16(record[28]) | UInt16(record[29]) << 8 == UInt16(record[30]) << 8 | UInt16(record[31]) else {
            throw .malformed("a directory record's little- and big-endian numbers disagree (readers differ on which they take)")
        }
        return (Int64(record.u32(2)), Int64(record.u32(10)))
    }

    /// A Joliet name (UCS-2, big-endian) as text, its `;1` version taken off as readers do.
    private static func joliet(_ raw: [UInt8]) -> String {
        var units: [UInt16] = []
        for index in stride(from: 0, to: raw.count - 1, by: 2) { units.append(UInt16(raw[index]) << 8 | UInt16(raw[index + 1])) }
        var name = String(decoding: units, as: UTF16.self)
        if let semicolon = name.lastIndex(of: ";") { name = String(name[..<semicolon]) }
        return name
    }
}
