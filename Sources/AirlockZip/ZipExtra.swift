import AirlockSystem
import AirlockText

/// The extra fields of one ZIP record (central or local).
struct ZipExtra {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The sizes and offset a record declares, before and after its ZIP64 field.
    struct Sizes {
        var uncompressed: UInt64
        var compressed: UInt64
        var offset: UInt64
        var disk: UInt32
    }

    static let zip64ID: UInt16 = 0x0001
    static let unicodePathID: UInt16 = 0x7075

    /// Each field's id and body; a field that overruns the record is a rejection.
    /// Fewer than four bytes left over are ignored, as libarchive and zipfile do.
    func fields() throws(ZipDirectory.Failure) -> [(id: UInt16, body: ArraySlice<UInt8>)] {
        var position = 0
        var result: [(id: UInt16, body: ArraySlice<UInt8>)] = []
        while position + 4 <= bytes.count {
            let id = bytes.u16(position), length = Int(bytes.u16(position + 2))
            guard position + 4 + length <= bytes.count else { throw .malformed("an extra field overruns its record") }
            result.append((id, bytes[(position + 4)..<(position + 4 + length)]))
            position += 4 + length
        }
        return result
    }

    var hasZip64: Bool { (try? fields())?.contains { $0.id == ZipExtra.zip64ID } ?? false }

    /// An Info-ZIP Unicode path field: a version, the CRC-32 of the header name
    /// it was written for, and a UTF-8 name.
    struct UnicodePath: Equatable {
        let version: UInt8
        let nameCRC: UInt32
        let name: [UInt8]
    }

    /// Rejects what would let two readers size the entry or pick its name
    /// differently: a ZIP64 or Unicode path field that appears twice (readers
    /// differ on which one counts), or a Unicode path field too short to hold
    /// its CRC. Returns the Unicode path field, which `ZipName` weighs against
    /// the name. Other fields (timestamps, alignment padding) change nothing a
    /// reader extracts.
    func check(name: [UInt8]) throws(ZipDirectory.Failure) -> UnicodePath? {
        var seen: Set<UInt16> = []
        var unicode: UnicodePath?
        for field in try fields() where field.id == ZipExtra.zip64ID || field.id == ZipExtra.unicodePathID {
            guard seen.insert(field.id).inserted else {
                throw .malformed("\(EscapedName(name)): extra field 0x\(String(field.id, radix: 16)) appears twice")
            }
            if field.id == ZipExtra.unicodePathID {
                let body = Array(field.body)
                guard body.count >= 5 else { throw .malformed("\(EscapedName(name)): its Unicode path field is truncated") }
                unicode = UnicodePath(version: body[0], nameCRC: body.u32(1), name: Array(body[5...]))
            }
        }
        return unicode
    }

    /// Replaces each placeholder (0xFFFFFFFF, or 0xFFFF for the disk) with the
    /// next value of the ZIP64 field, in the order the format fixes.
    func applyZip64(_ sizes: inout Sizes) throws(ZipDirectory.Failure) {
        guard let field = try fields().first(where: { $0.id == ZipExtra.zip64ID }) else { return }
        let body = Array(field.body)
        var cursor = 0
        func next() throws(ZipDirectory.Failure) -> UInt64 {
            guard cursor + 8 <= body.count else { throw .malformed("ZIP64 extra field too short") }
            defer { cursor += 8 }
            return body.u64(cursor)
        }
        if sizes.uncompressed == 0xFFFF_FFFF { sizes.uncompressed = try next() }
        if sizes.compressed == 0xFFFF_FFFF { sizes.compressed = try next() }
        if sizes.offset == 0xFFFF_FFFF { sizes.offset = try next() }
        if sizes.disk == 0xFFFF {
            guard cursor + 4 <= body.count else { throw .malformed("ZIP64 extra field too short") }
            sizes.disk = body.u32(cursor)
        }
    }
}
