import AirlockChild
import AirlockSystem
import AirlockZip

/// A cpio archive's headers, walked by airlock itself (the portable ASCII
/// formats: newc "070701", odc "070707"): every header, name and data block
/// from byte 0 to the `TRAILER!!!` entry, then only zero bytes, the padding
/// GNU cpio and libarchive write to a block boundary of any size (`-C 8192`).
/// libarchive stops at the trailer; another archive after it (`cat a.cpio
/// b.cpio`, which the Linux initramfs unpacker reads too) or any other bytes
/// would be dropped unseen, so they are refused.
struct CpioListing {
    struct Entry: Equatable {
        let name: [UInt8]
        let size: Int64
    }

    private(set) var entries: [Entry] = []
    typealias Reader = ZipDirectory.Reader

    private struct Layout {
        let header: Int
        let nameSize: (at: Int, digits: Int)
        let fileSize: (at: Int, digits: Int)
        let radix: Int
        /// Header plus name, and data, are each padded to a multiple of this.
        let alignment: Int64
    }

    private static let newc = Layout(header: 110, nameSize: (94, 8), fileSize: (54, 8), radix: 16, alignment: 4)
    private static let odc = Layout(header: 76, nameSize: (59, 6), fileSize: (65, 11), radix: 8, alignment: 1)
    static let trailer = Array("TRAILER!!!".utf8)

    /// Walks the drop; at most `limit` entries are listed (past them libarchive
    /// reports too many entries, and the walk only looks for the end).
    init(_ file: DropFile, size: Int64, limit: Int) throws(ZipDirectory.Failure) {
        let reader = Reader(file: file, size: size)
        let magic = try reader.bytes(at: 0, count: Int(min(size, 6)))
        let layout: Layout
        switch magic {
        case Array("070701".utf8): layout = CpioListing.newc
        case Array("070707".utf8): layout = CpioListing.odc
        default: throw .malformed("not a newc or odc cpio header")
        }
        var position: Int64 = 0
        while true {
            guard position + Int64(layout.header) <= size else { throw .malformed("the cpio archive ends without its TRAILER!!! entry") }
            let header = try reader.bytes(at: position, count: layout.header)
            guard Array(header[0..<6]) == magic else { throw .malformed("a cpio header at byte \(position) lacks the archive's magic") }
            let nameSize = try CpioListing.number(header, layout.nameSize, radix: layout.radix)
            let fileSize = try CpioListing.number(header, layout.fileSize, radix: layout.radix)
            guard nameSize >= 1, nameSize <= 4096 else { throw .malformed("a cpio name size out of range") }
            let named = try reader.bytes(at: position + Int64(layout.header), count: Int(nameSize))
            guard named.last == 0 else { throw .malformed("a cpio name is not terminated") }
            let name = Array(named.dropLast())
            let dataStart = CpioListing.aligned(position + Int64(layout.header) + nameSize, layout.alignment)
            position = try Reader.sum(dataStart, CpioListing.aligned(fileSize, layout.alignment))
            if name == CpioListing.trailer { break }
            if entries.count < limit { entries.append(Entry(name: name, size: fileSize)) }
        }
        guard position <= size else { throw .malformed("the cpio trailer runs past the end of the drop") }
        if let junk = try ArchiveEnd.firstNonZero(from: position, to: size, reader) {
            throw .malformed("\(size - position) bytes follow the cpio trailer, not zero padding (byte \(junk))")
        }
    }

    private static func aligned(_ value: Int64, _ alignment: Int64) -> Int64 {
        (value + alignment - 1) / alignment * alignment
    }

    /// A header field of hexadecimal (newc) or octal (odc) digits.
    private static func number(_ header: [UInt8], _ field: (at: Int, digits: Int), radix: Int) throws(ZipDirectory.Failure) -> Int64 {
        var value: Int64 = 0
        for byte in header[field.at..<(field.at + field.digits)] {
            guard let digit = Int(String(UnicodeScalar(byte)), radix: radix) else { throw .malformed("a cpio header field is not a number") }
            value = value * Int64(radix) + Int64(digit)
        }
        return value
    }
}
