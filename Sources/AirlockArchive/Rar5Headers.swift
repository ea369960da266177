import AirlockText

/// RAR 5 header bodies, read field by field as libarchive 3.6 reads them, and
/// required to end where their declared sizes end, as 7-Zip and unrar take
/// them. libarchive does not skip to a header's declared end: it reads the
/// main header's archive flags and one locator record, and a file header's
/// fields, name and extra records, and takes the next byte for what follows.
/// A header longer than what it parses can therefore hide a block that
/// libarchive extracts and 7-Zip never lists (a file header inside the main
/// header's locator record), and an extra record longer than its fields makes
/// libarchive read the next record from inside it. Every byte must be one
/// both readers consume the same way, or the archive is `corrupt-archive`.
enum Rar5Headers {
    typealias Refusal = RarListing.Refusal

    static func refuse(_ detail: String) -> Refusal { Refusal(reason: .corruptArchive, detail: detail) }

    /// The main archive header's body, after its type and flags: archive flags,
    /// a volume number, and at most one extra record, the locator.
    static func main(_ header: inout RarCursor, flags: UInt64, extraSize: Int) throws {
        guard flags & 0x0002 == 0 else { throw refuse("the main archive header declares a data area, which libarchive does not skip") }
        let archiveFlags = try header.vint()
        if archiveFlags & 0x0001 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
        if archiveFlags & 0x0002 != 0 { _ = try header.vint() }
        guard header.offset == header.bytes.count - extraSize else {
            throw refuse("the main archive header holds bytes between its fields and its extra area")
        }
        guard extraSize > 0 else { return }
        let size = try header.vint()
        let start = header.offset
        guard try header.vint() == 1 else { throw refuse("the main archive header has an extra record libarchive does not read") }
        let locator = try header.vint()
        if locator & 0x0001 != 0 { _ = try header.vint() }
        if locator & 0x0002 != 0 { _ = try header.vint() }
        guard UInt64(header.offset - start) == size, header.atEnd else {
            throw refuse("the main archive header's locator record holds bytes its fields do not account for")
        }
    }

    /// A file or service header's body: its fields and name, then its extra
    /// records, which must fill the extra area exactly.
    static func file(_ header: inout RarCursor, flags: UInt64, extraSize: Int) throws -> RarListing.Entry {
        guard flags & 0x0002 != 0 else { throw refuse("a file header without a data area") }
        let fileFlags = try header.vint()
        let size = try header.vint()
        let attributes = try header.vint()
        if fileFlags & 0x0002 != 0 { try header.skip(4) }
        let crc = fileFlags & 0x0004 != 0 ? try header.u32() : nil
        _ = try header.vint()  // compression information
        let host = try header.vint()
        let name = try header.take(Int(clamping: try header.vint()))
        guard (fileFlags & 0x0001 != 0) == RarListing.directoryAttributes(UInt32(truncatingIfNeeded: attributes), unixHost: host == 1) else {
            throw refuse("\(EscapedName(name)): its header's directory flag and its attributes disagree")
        }
        guard header.offset == header.bytes.count - extraSize else {
            throw refuse("\(EscapedName(name)): its header holds bytes between its name and its extra area")
        }
        try records(&header, name: name)
        let directory = fileFlags & 0x0001 != 0
        return RarListing.Entry(name: name, crc: directory ? nil : crc, size: fileFlags & 0x0008 != 0 ? nil : size,
                                windowsHost: host == 0, comparableName: true)
    }

    /// The extra records of a file header, each as long as libarchive's reading
    /// of it; one it does not know makes libarchive skip the rest of the area,
    /// so it must be the last.
    private static func records(_ header: inout RarCursor, name: [UInt8]) throws {
        while !header.atEnd {
            let size = try header.vint()
            let start = header.offset
            guard size > 0, size <= UInt64(header.bytes.count - start) else {
                throw refuse("\(EscapedName(name)): an extra record runs past its header")
            }
            switch try header.vint() {
            case 1: throw Refusal(reason: .encryptedEntry, detail: "\(EscapedName(name)): entry is encrypted")
            case 2:
                guard try header.vint() == 0 else { throw refuse("\(EscapedName(name)): a hash type libarchive does not know") }
                try header.skip(32)
            case 3:
                let timeFlags = try header.vint()
                let width = timeFlags & 0x0001 != 0 ? 4 : 8
                for bit: UInt64 in [0x0002, 0x0004, 0x0008] where timeFlags & bit != 0 { try header.skip(width) }
            case 4:
                _ = try header.vint()
                _ = try header.vint()
            case 5:
                _ = try header.vint()
                _ = try header.vint()
                try header.skip(Int(clamping: try header.vint()))
            case 6:
                let owner = try header.vint()
                if owner & 0x0001 != 0 { try header.skip(Int(clamping: try header.vint())) }
                if owner & 0x0002 != 0 { try header.skip(Int(clamping: try header.vint())) }
                if owner & 0x0004 != 0 { _ = try header.vint() }
                if owner & 0x0008 != 0 { _ = try header.vint() }
            default:
                try header.skip(Int(clamping: size) - (header.offset - start))
                guard header.atEnd else {
                    throw refuse("\(EscapedName(name)): an extra record libarchive skips the rest of the header at, before others")
                }
                return
            }
            guard UInt64(header.offset - start) == size else {
                throw refuse("\(EscapedName(name)): an extra record holds bytes its fields do not account for")
            }
        }
    }
}
