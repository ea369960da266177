import AirlockChild
import AirlockSystem
@testable import AirlockZip
#if canImport(Glibc)
import Glibc
#endif

/// A ZIP archive described entry by entry and laid out the way a plain writer
/// lays it out (local records from byte 0, the central directory, the end
/// records), with the places of every record kept so that a test can then make
/// exactly one field lie.
struct ZipBuilder {
    struct Entry {
        var name: [UInt8]
        var data: [UInt8] = []
        /// Stored (0) unless a test says otherwise; the parser never inflates.
        var method: UInt16 = 0
        var flags: UInt16 = 0
        /// nil: the CRC-32 of `data`.
        var crc: UInt32?
        var centralExtra: [UInt8] = []
        var localExtra: [UInt8] = []
        /// Bytes after the data: the data descriptor of an entry with flag bit 3.
        var trailer: [UInt8] = []
        /// Set: the entry has no local record of its own, and its directory
        /// record points at this offset (inside another entry's bytes).
        var pointsAt: Int?

        init(_ name: String, _ data: String = "", method: UInt16 = 0, flags: UInt16 = 0) {
            self.name = Array(name.utf8)
            self.data = Array(data.utf8)
            self.method = method
            self.flags = flags
        }

        var checksum: UInt32 { crc ?? ZipCRC.of(data) }
    }

    var entries: [Entry] = []
    /// Bytes before the first entry (a self-extractor stub).
    var prefix: [UInt8] = []
    /// Whether the offsets written count the prefix, as a tool that adjusts them would.
    var offsetsCountPrefix = true
    /// Bytes after entry N's record, which nothing accounts for.
    var gapAfter: [Int: [UInt8]] = [:]
    /// Bytes inside the directory after its records, counted in its size.
    var directoryPadding: [UInt8] = []
    var comment: [UInt8] = []
    /// A ZIP64 end record and locator, with the placeholders left in the end record.
    var zip64 = false

    init(_ entries: [Entry] = []) { self.entries = entries }

    /// The bytes, and where each record lies in them.
    struct Image {
        var bytes: [UInt8]
        var local: [Int] = []
        var central: [Int] = []
        var directory = 0
        var zip64End: Int?
        var locator: Int?
        var end = 0

        mutating func set16(_ at: Int, _ value: UInt16) { bytes.replaceSubrange(at..<(at + 2), with: le16(value)) }
        mutating func set32(_ at: Int, _ value: UInt32) { bytes.replaceSubrange(at..<(at + 4), with: le32(value)) }
        mutating func set64(_ at: Int, _ value: UInt64) { bytes.replaceSubrange(at..<(at + 8), with: le64(value)) }
    }

    func build() -> Image {
        var image = Image(bytes: prefix)
        let shift = offsetsCountPrefix ? 0 : prefix.count
        var offsets: [Int] = []
        for (index, entry) in entries.enumerated() {
            if let target = entry.pointsAt {
                offsets.append(target)
                image.local.append(target)
                continue
            }
            offsets.append(image.bytes.count - shift)
            image.local.append(image.bytes.count)
            image.bytes += le32(0x0403_4B50) + le16(20) + le16(entry.flags) + le16(entry.method) + le16(0) + le16(0x21)
            image.bytes += le32(entry.checksum) + le32(UInt32(entry.data.count)) + le32(UInt32(entry.data.count))
            image.bytes += le16(UInt16(entry.name.count)) + le16(UInt16(entry.localExtra.count))
            image.bytes += entry.name + entry.localExtra + entry.data + entry.trailer
            image.bytes += gapAfter[index] ?? []
        }
        image.directory = image.bytes.count
        for (index, entry) in entries.enumerated() {
            image.central.append(image.bytes.count)
            image.bytes += le32(0x0201_4B50) + le16(0x0314) + le16(20) + le16(entry.flags) + le16(entry.method)
            image.bytes += le16(0) + le16(0x21) + le32(entry.checksum)
            image.bytes += le32(UInt32(entry.data.count)) + le32(UInt32(entry.data.count))
            image.bytes += le16(UInt16(entry.name.count)) + le16(UInt16(entry.centralExtra.count)) + le16(0) + le16(0) + le16(0)
            image.bytes += le32(0o100644 << 16) + le32(UInt32(offsets[index]))
            image.bytes += entry.name + entry.centralExtra
        }
        image.bytes += directoryPadding
        let size = image.bytes.count - image.directory, offset = image.directory - shift
        let count = UInt16(entries.count)
        if zip64 {
            image.zip64End = image.bytes.count
            image.bytes += le32(0x0606_4B50) + le64(44) + le16(45) + le16(45) + le32(0) + le32(0)
            image.bytes += le64(UInt64(count)) + le64(UInt64(count)) + le64(UInt64(size)) + le64(UInt64(offset))
            image.locator = image.bytes.count
            image.bytes += le32(0x0706_4B50) + le32(0) + le64(UInt64(image.zip64End! - shift)) + le32(1)
        }
        image.end = image.bytes.count
        image.bytes += le32(0x0605_4B50) + le16(0) + le16(0)
        image.bytes += zip64 ? le16(0xFFFF) + le16(0xFFFF) + le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF)
                             : le16(count) + le16(count) + le32(UInt32(size)) + le32(UInt32(offset))
        image.bytes += le16(UInt16(comment.count)) + comment
        return image
    }

    /// A ZIP64 extended information field holding `values`, then `disk` if given.
    static func zip64Field(_ values: [UInt64], disk: UInt32? = nil) -> [UInt8] {
        let body = values.flatMap(le64) + (disk.map(le32) ?? [])
        return le16(0x0001) + le16(UInt16(body.count)) + body
    }

    /// An Info-ZIP Unicode path field naming `name`, bound to the header name `boundTo`.
    static func unicodePathField(_ name: String, boundTo header: String, version: UInt8 = 1) -> [UInt8] {
        let body = [version] + le32(ZipCRC.of(Array(header.utf8))) + Array(name.utf8)
        return le16(0x7075) + le16(UInt16(body.count)) + body
    }

    /// A data descriptor, with its optional signature, 8-byte sizes when `wide`.
    static func descriptor(crc: UInt32, size: Int, signature: Bool = true, wide: Bool = false) -> [UInt8] {
        (signature ? le32(0x0807_4B50) : []) + le32(crc)
            + (wide ? le64(UInt64(size)) + le64(UInt64(size)) : le32(UInt32(size)) + le32(UInt32(size)))
    }
}

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
func le32(_ value: UInt32) -> [UInt8] { le16(UInt16(value & 0xFFFF)) + le16(UInt16(value >> 16)) }
func le64(_ value: UInt64) -> [UInt8] { le32(UInt32(value & 0xFFFF_FFFF)) + le32(UInt32(value >> 32)) }

/// What the ZIP directory parser makes of some bytes: "accepted", or the
/// rejection in words.
enum ZipVerdict {
    /// Parses `bytes` from a file of their own (in a directory of its own,
    /// removed before the parse), claiming the file is `declaredSize` long.
    static func of(_ bytes: [UInt8], maxEntries: Int = 1000, declaredSize: Int64? = nil) throws -> String {
        let file = try DropFile(scratchFile(holding: bytes))
        defer { file.descriptor.close() }
        return try of(file, size: declaredSize ?? Int64(bytes.count), maxEntries: maxEntries)
    }

    static func of(_ file: DropFile, size: Int64, maxEntries: Int = 1000) throws -> String {
        do {
            _ = try ZipDirectory(file: file, fileSize: size, maxEntries: maxEntries, legacyNames: TextConverter(from: "CP437"))
            return "accepted"
        } catch let failure as ZipDirectory.Failure {
            switch failure {
            case .malformed(let detail): return detail
            case .tooManyEntries(let count): return "too many entries: \(count)"
            case .unreadable(let error): return "unreadable: \(error)"
            }
        }
    }

    /// An open, already unlinked file holding `bytes`.
    static func scratchFile(holding bytes: [UInt8]) throws -> FileDescriptor {
        var template = Array("/tmp/airlock-zip-test-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw Errno.current }
        let path = String(cString: template)
        defer { rmdir(path) }
        let directory = try FileDescriptor.openDirectory(path: path)
        defer { directory.close() }
        let name = Array("drop.zip".utf8)
        let file = try directory.open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
        try directory.unlink(name)
        do { try file.writeAll(bytes) } catch { file.close(); throw error }
        return file
    }

    /// A directory's descriptor, which any read fails on (EISDIR).
    static func unreadableFile() throws -> FileDescriptor {
        var template = Array("/tmp/airlock-zip-test-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw Errno.current }
        let path = String(cString: template)
        defer { rmdir(path) }
        return try FileDescriptor.openDirectory(path: path)
    }
}
