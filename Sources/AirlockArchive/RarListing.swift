import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockText
import AirlockZip
import CArchive
import CLzma

/// A RAR archive's headers, walked by airlock itself before libarchive reads it.
///
/// libarchive (3.6) does not compare a stored entry's data with the CRC32 its
/// header records, and reads a volume of a multi-volume set as if it were
/// whole. So the headers are read here too: each header's own CRC is checked,
/// the blocks must follow one another to the end-of-archive block and the end
/// of the file, and what libarchive yields is compared with this listing entry
/// by entry, the data's CRC32 included.
struct RarListing {
    struct Entry {
        let name: [UInt8]
        /// The CRC32 of the unpacked data; nil for a directory.
        let crc: UInt32?
        /// The unpacked size, where the header records it.
        var size: Int64?
        /// Written on Windows, whose `\` separators libarchive turns into `/`.
        var windowsHost = false
        /// Whether libarchive yields the name as these bytes (RAR 5's UTF-8, a RAR 4
        /// name without its Unicode form), so that the two can be compared.
        var comparableName = false
        /// Where the entry's data starts in the drop.
        var dataOffset: Int64 = 0

        init(name: [UInt8], crc: UInt32?, size: UInt64?, windowsHost: Bool, comparableName: Bool) {
            self.name = name
            self.crc = crc
            self.size = size.flatMap { $0 <= UInt64(Int64.max) ? Int64($0) : nil }
            self.windowsHost = windowsHost
            self.comparableName = comparableName
        }
    }

    private(set) var entries: [Entry] = []

    /// Why the archive is refused before libarchive reads it.
    struct Refusal: Error {
        let reason: Reason
        let detail: String
    }

    typealias Reader = ZipDirectory.Reader

    static let rar4Signature: [UInt8] = [0x52, 0x61, 0x72, 0x21, 0x1A, 0x07, 0x00]
    static let rar5Signature: [UInt8] = [0x52, 0x61, 0x72, 0x21, 0x1A, 0x07, 0x01, 0x00]
    static let multiVolume = "a volume of a multi-volume RAR set: the rest of it is in other files, which airlock never reads"

    /// Reads the drop's headers; throws `Refusal`, or `SystemError` when the drop cannot be read.
    static func read(_ file: DropFile, size: Int64) throws -> RarListing {
        let reader = Reader(file: file, size: size)
        do {
            let head = try reader.bytes(at: 0, count: Int(min(size, 8)))
            var listing = RarListing()
            if head.starts(with: rar5Signature) {
                try listing.walk5(reader, from: 8)
            } else if head.starts(with: rar4Signature) {
                try listing.walk4(reader, from: 7)
            } else {
                throw Refusal(reason: .unsupportedFormat, detail: "not a RAR signature")
            }
            return listing
        } catch let failure as ZipDirectory.Failure {
            switch failure {
            case .malformed(let detail): throw Refusal(reason: .corruptArchive, detail: detail)
            case .tooManyEntries(let count): throw Refusal(reason: .tooManyEntries, detail: "\(count) entries")
            case .unreadable(let error): throw error
            }
        }
    }

    /// RAR 5: CRC32, size (vint), then type, flags, [extra size], [data size], body, extra; then the data.
    private mutating func walk5(_ reader: Reader, from start: Int64) throws {
        var position = start
        while true {
            guard position < reader.size else { throw Refusal(reason: .corruptArchive, detail: "the archive ends without its end-of-archive header") }
            let prefix = try reader.bytes(at: position, count: Int(min(reader.size - position, 7)))
            guard prefix.count >= 5 else { throw Refusal(reason: .corruptArchive, detail: "a header is cut short") }
            var cursor = RarCursor(prefix, at: 4)
            let headerSize = try cursor.vint()
            guard headerSize > 0, headerSize <= 2 * 1024 * 1024 else { throw Refusal(reason: .corruptArchive, detail: "a header size out of range") }
            let sized = try reader.bytes(at: position + 4, count: cursor.offset - 4 + Int(headerSize))
            guard lzma_crc32(sized, sized.count, 0) == prefix.u32(0) else {
                throw Refusal(reason: .corruptArchive, detail: "a RAR 5 header fails its CRC32")
            }
            var header = RarCursor(sized, at: cursor.offset - 4)
            let type = try header.vint(), flags = try header.vint()
            let extraSize = flags & 0x0001 != 0 ? try header.vint() : 0
            let dataSize = flags & 0x0002 != 0 ? try header.vint() : 0
            guard extraSize <= UInt64(sized.count), dataSize <= UInt64(Int64.max) else { throw Refusal(reason: .corruptArchive, detail: "a size out of range") }
            switch type {
            case 1:
                try Rar5Headers.main(&header, flags: flags, extraSize: Int(extraSize))
            case 4:
                throw Refusal(reason: .encryptedEntry, detail: "the archive's headers are encrypted")
            case 2, 3:
                if flags & 0x0018 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                var entry = try Rar5Headers.file(&header, flags: flags, extraSize: Int(extraSize))
                entry.dataOffset = try Reader.sum(position, 4, Int64(sized.count))
                // A service header (a comment, ACLs, streams) is no entry: libarchive skips its data.
                if type == 2 { entries.append(entry) }
            case 5:
                if try header.vint() & 0x0001 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                let end = try Reader.sum(position, 4, Int64(sized.count))
                guard end == reader.size else { throw Refusal(reason: .corruptArchive, detail: "\(reader.size - end) bytes after the end-of-archive header") }
                return
            default:
                // libarchive skips an unknown header by a length that assumes one-byte type and flags
                // and leaves its data area unskipped; 7-Zip skips both.
                throw Refusal(reason: .corruptArchive, detail: "a RAR 5 header of unknown type \(type)")
            }
            position = try Reader.sum(position, 4, Int64(sized.count), Int64(dataSize))
        }
    }

    /// RAR 4: CRC16 (the low half of a CRC32), type, flags, size, [added size], body; then the added data.
    private mutating func walk4(_ reader: Reader, from start: Int64) throws {
        var position = start
        while position < reader.size {
            let fixed = try reader.bytes(at: position, count: Int(min(reader.size - position, 7)))
            guard fixed.count == 7 else { throw Refusal(reason: .corruptArchive, detail: "a header is cut short") }
            let type = fixed[2], flags = fixed.u16(3), size = Int(fixed.u16(5))
            guard size >= 7 + (flags & 0x8000 != 0 ? 4 : 0) else { throw Refusal(reason: .corruptArchive, detail: "a header size out of range") }
            let header = try reader.bytes(at: position, count: size)
            guard UInt16(lzma_crc32(Array(header[2...]), size - 2, 0) & 0xFFFF) == header.u16(0) else {
                throw Refusal(reason: .corruptArchive, detail: "a RAR 4 header fails its CRC")
            }
            var added = flags & 0x8000 != 0 ? Int64(header.u32(7)) : 0
            switch type {
            case 0x73:
                // libarchive and unrar read a main header as HEAD_SIZE bytes, whatever its flags;
                // a LONG_BLOCK size would have this walk skip what they read as the next block.
                if flags & 0x8000 != 0 { throw Refusal(reason: .corruptArchive, detail: "a RAR 4 main header flagged LONG_BLOCK") }
                if flags & 0x0001 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                if flags & 0x0080 != 0 { throw Refusal(reason: .encryptedEntry, detail: "the archive's headers are encrypted") }
            case 0x74, 0x7A:
                guard size >= 32 else { throw Refusal(reason: .corruptArchive, detail: "a file header cut short") }
                if flags & 0x0003 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                let large = flags & 0x0100 != 0 ? 8 : 0
                let nameLength = Int(header.u16(26))
                guard 32 + large + nameLength <= size else { throw Refusal(reason: .corruptArchive, detail: "a file name overruns its header") }
                if large != 0 { added |= Int64(header.u32(32)) << 32 }
                let name = Array(header[(32 + large)..<(32 + large + nameLength)])
                if flags & 0x0004 != 0 { throw Refusal(reason: .encryptedEntry, detail: "\(EscapedName(name)): entry is encrypted") }
                // A NEWSUB header (0x7A: comments, ACLs, streams) is read like a file and skipped by libarchive.
                if type == 0x74 {
                    let directory = flags & 0x00E0 == 0x00E0
                    guard directory == RarListing.directoryAttributes(header.u32(28), unixHost: header[15] == 3) else {
                        throw Refusal(reason: .corruptArchive, detail: "\(EscapedName(name)): its header's directory flag and its attributes disagree")
                    }
                    var entry = Entry(name: name, crc: directory ? nil : header.u32(16),
                                      size: UInt64(header.u32(11)) | (large != 0 ? UInt64(header.u32(36)) << 32 : 0),
                                      windowsHost: header[15] < 3, comparableName: flags & 0x0200 == 0)
                    entry.dataOffset = try Reader.sum(position, Int64(size))
                    entries.append(entry)
                }
            case 0x7B:
                let end = try Reader.sum(position, Int64(size), added)
                guard end == reader.size else { throw Refusal(reason: .corruptArchive, detail: "\(reader.size - end) bytes after the end-of-archive header") }
                return
            default: break  // comments, recovery records, service blocks: no entry
            }
            position = try Reader.sum(position, Int64(size), added)
        }
    }
}

extension RarListing {
    /// Whether attributes say directory: a Unix mode's type, else the DOS directory bit. A header's
    /// directory flag must say the same, or readers that take one (libarchive a Unix mode, 7-Zip the
    /// flag or a Windows attribute) see a file where others see a directory.
    static func directoryAttributes(_ attributes: UInt32, unixHost: Bool) -> Bool {
        unixHost ? attributes & 0o170000 == 0o040000 : attributes & 0x10 != 0
    }
}

/// A bounds-checked reader of one header's fields.
struct RarCursor {
    let bytes: [UInt8]
    var offset: Int

    init(_ bytes: [UInt8], at offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    var atEnd: Bool { offset >= bytes.count }

    /// A RAR 5 variable-length integer: seven bits a byte, low first, at most ten bytes.
    mutating func vint() throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard offset < bytes.count else { throw RarListing.Refusal(reason: .corruptArchive, detail: "a header field runs past its header") }
            let byte = bytes[offset]
            offset += 1
            guard shift < 63 || byte & 0x7E == 0 else { break }
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        throw RarListing.Refusal(reason: .corruptArchive, detail: "a variable-length number out of range")
    }

    mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else {
            throw RarListing.Refusal(reason: .corruptArchive, detail: "a header field runs past its header")
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func skip(_ count: Int) throws { _ = try take(count) }

    mutating func u32() throws -> UInt32 { try take(4).u32(0) }
}

extension ArchiveScan {
    /// The RAR's own listing, or nil after recording why the archive is refused.
    func checkRar(_ file: DropFile, _ outcome: inout ScanOutcome) -> RarListing? {
        do {
            return try RarListing.read(file, size: dropSize)
        } catch let refusal as RarListing.Refusal {
            outcome.findings.record(Violation(refusal.reason, refusal.detail))
        } catch let error as SystemError {
            outcome.systemError = error
            outcome.failedWhile = .readingDrop
        } catch {
            outcome.findings.record(Violation(.corruptArchive, "\(error)"))
        }
        return nil
    }
}

extension EntryScan {
    /// How the `index`th entry libarchive yields differs from the RAR's own
    /// listing (its name, its size, where its data starts); nil if it does not.
    func rarHeaderProblem(_ index: Int, yielded: [UInt8], entry: OpaquePointer) -> String? {
        guard let listed = rarEntries else { return nil }
        guard index < listed.count else { return "libarchive yields more entries than the RAR headers list" }
        let record = listed[index]
        if record.comparableName {
            let name = record.windowsHost ? record.name.map { $0 == 0x5C ? 0x2F : $0 } : record.name
            let bare = yielded.last == 0x2F && name.last != 0x2F ? Array(yielded.dropLast()) : yielded
            guard bare == name || ZipDirectory.NameKey(bare) == ZipDirectory.NameKey(name) else {
                return "libarchive reads entry \(index + 1) as \(EscapedName(yielded).text), the RAR headers as \(EscapedName(record.name).text)"
            }
        }
        // A link's target is its data in RAR 4, which libarchive reads into the link: only a regular file's size is its data's.
        if let size = record.size, archive_entry_filetype(entry) == 0o100000, archive_entry_size_is_set(entry) != 0,
           archive_entry_size(entry) != size {
            return "libarchive reads \(archive_entry_size(entry)) bytes for entry \(index + 1), its RAR header says \(size)"
        }
        // (A link is refused whatever its position: libarchive has read its target already.)
        let type = archive_entry_filetype(entry)
        if type == 0o100000 || type == 0o040000, stream.consumed != record.dataOffset {
            return "libarchive reads entry \(index + 1)'s data from byte \(stream.consumed), its RAR header puts it at \(record.dataOffset)"
        }
        return nil
    }

    /// What is wrong with the data just read for entry `index` of a RAR, by its listing; nil if nothing.
    func rarDataProblem(_ index: Int) -> String? {
        guard let listed = rarEntries else { return nil }
        guard index < listed.count else { return "libarchive yields more entries than the RAR headers list" }
        guard let crc = listed[index].crc, crc != dataCRC else { return nil }
        return "the data's CRC32 is \(String(dataCRC, radix: 16)), its header records \(String(crc, radix: 16))"
    }
}
