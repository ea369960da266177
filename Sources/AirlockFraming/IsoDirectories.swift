import AirlockFormats
import AirlockText
import AirlockZip

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
package struct IsoDirectories {
    package typealias Reader = ZipDirectory.Reader
    package typealias Failure = ZipDirectory.Failure

    /// The Joliet tree's files, by path, with their sizes; nil without a Joliet descriptor.
    package private(set) var joliet: [ZipDirectory.NameKey: Int64]?
    /// The primary tree's files by their Rock Ridge names (NM entries), where it has any.
    package private(set) var rockRidge: [ZipDirectory.NameKey: Int64]?
    /// The primary tree's entries that Rock Ridge makes something other than a plain
    /// regular file, by path: a link, device, pipe or socket (an SL entry, or PX's mode),
    /// or a file stored compressed (ZF, zisofs). Readers that take Rock Ridge (isoinfo,
    /// Linux) read them so whether or not the SP entry that should announce it is
    /// intact; libarchive, without it, yields plain files of the stored bytes.
    package private(set) var rockRidgeSpecial: Set<ZipDirectory.NameKey> = []
    private var records = 0
    private static let maxRecords = 200_000

    package init(_ reader: Reader) throws(Failure) {
        var sector = ArchiveFormat.isoDescriptorOffset
        for _ in 0..<64 {
            guard sector + 2048 <= reader.size else { break }
            let descriptor = try reader.bytes(at: sector, count: 2048)
            guard ArchiveFormat.isISO9660Descriptor(descriptor), descriptor[0] != 255 else { break }
            let isJoliet = descriptor[0] == 2 && descriptor[88] == 0x25 && descriptor[89] == 0x2F
                && [0x40, 0x43, 0x45].contains(descriptor[90])
            try IsoDirectories.checkDescriptor(descriptor, reader)
            if descriptor[0] == 1 || isJoliet {
                var named = false
                let files = try walk(reader, root: Array(descriptor[156..<190]), blockSize: Int64(descriptor.u16(128)), joliet: isJoliet,
                                     rockRidge: &named)
                if isJoliet && joliet == nil { joliet = files }
                if !isJoliet && named && rockRidge == nil { rockRidge = files }
            }
            sector += 2048
        }
    }

    /// Every directory beneath `root`, breadth first, each extent once; the files' paths and sizes.
    private mutating func walk(_ reader: Reader, root: [UInt8], blockSize: Int64, joliet: Bool,
                               rockRidge named: inout Bool) throws(Failure) -> [ZipDirectory.NameKey: Int64] {
        guard blockSize > 0 else { throw .malformed("a volume descriptor's logical block size is 0") }
        let (rootExtent, rootSize) = try IsoDirectories.checked(root)
        var queue: [(extent: Int64, size: Int64, path: [UInt8])] = [(rootExtent, rootSize, [])]
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
                var name = joliet ? Array(IsoDirectories.joliet(raw).utf8) : IsoDirectories.plain(raw)
                var special = false
                if !joliet {
                    let entries = try IsoDirectories.rockRidge(record, nameLength: nameLength, reader, blockSize: blockSize)
                    if let alternate = entries.name {
                        name = alternate
                        named = true
                    }
                    special = entries.special
                }
                let path = directory.path.isEmpty ? name : directory.path + [0x2F] + name
                if record[25] & 0x02 != 0 {
                    queue.insert((extent, size, path), at: 0)
                } else {
                    files[ZipDirectory.NameKey(path), default: 0] += size
                    if special { rockRidgeSpecial.insert(ZipDirectory.NameKey(path)) }
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

    /// A plain ISO 9660 name as readers show it: its `;1` version and a trailing `.` taken off.
    private static func plain(_ raw: [UInt8]) -> [UInt8] {
        var name = raw
        if let semicolon = name.lastIndex(of: 0x3B) { name = Array(name[..<semicolon]) }
        if name.last == 0x2E { name.removeLast() }
        return name
    }

    /// What a record's Rock Ridge entries say, in its System Use area and the
    /// continuation areas (CE) it names: its name, from the NM entries' parts (nil
    /// where it has none), and whether it is other than a plain regular file or a
    /// directory (`rockRidgeSpecial`).
    private static func rockRidge(_ record: [UInt8], nameLength: Int, _ reader: Reader,
                                  blockSize: Int64) throws(Failure) -> (name: [UInt8]?, special: Bool) {
        var area = Array(record[min(record.count, 33 + nameLength + (nameLength % 2 == 0 ? 1 : 0))...])
        var name: [UInt8]?
        var special = false
        for _ in 0..<8 {
            var offset = 0, next: (Int64, Int)?
            while offset + 4 <= area.count {
                let length = Int(area[offset + 2])
                guard length >= 4, offset + length <= area.count else { break }
                let entry = Array(area[offset..<(offset + length)])
                if entry[0] == 0x4E && entry[1] == 0x4D && length >= 5 && entry[4] & 0x06 == 0 {  // NM
                    name = (name ?? []) + entry[5...]
                } else if entry[0] == 0x43 && entry[1] == 0x45 && length >= 28 {  // CE
                    let block = Int64(entry.u32(4)), start = Int64(entry.u32(12)), size = Int(entry.u32(20))
                    guard size <= 64 * 1024 else { throw .malformed("a Rock Ridge continuation area is too large") }
                    next = (try Reader.sum(block * blockSize, start), size)
                } else if (entry[0] == 0x53 && entry[1] == 0x4C) || (entry[0] == 0x5A && entry[1] == 0x46) {  // SL, ZF
                    special = true
                } else if entry[0] == 0x50 && entry[1] == 0x58 && length >= 12 {  // PX: the mode, both byte orders
                    let type = entry.u32(4) & 0o170000, typeBigEndian = entry.u32BigEndian(8) & 0o170000
                    special = special || ![0o100000, 0o040000].contains(type) || ![0o100000, 0o040000].contains(typeBigEndian)
                } else if entry[0] == 0x53 && entry[1] == 0x54 {  // ST
                    break
                }
                offset += length
            }
            guard let (at, size) = next else { return (name, special) }
            guard at + Int64(size) <= reader.size else { throw .malformed("a Rock Ridge continuation area lies past the image") }
            area = try reader.bytes(at: at, count: size)
        }
        throw .malformed("Rock Ridge continuation areas chain too far")
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

extension Array where Element == UInt8 {
    package func u32BigEndian(_ at: Int) -> UInt32 { self[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
}
