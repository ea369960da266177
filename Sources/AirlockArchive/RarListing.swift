import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockText
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
            let extraStart = sized.count - Int(extraSize)
            switch type {
            case 1:
                if try header.vint() & 0x0001 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
            case 4:
                throw Refusal(reason: .encryptedEntry, detail: "the archive's headers are encrypted")
            case 2:
                if flags & 0x0018 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                try entries.append(RarListing.file5(&header, extra: Array(sized[extraStart...])))
            case 5:
                if try header.vint() & 0x0001 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                let end = try Reader.sum(position, 4, Int64(sized.count))
                guard end == reader.size else { throw Refusal(reason: .corruptArchive, detail: "\(reader.size - end) bytes after the end-of-archive header") }
                return
            default: break  // service headers (comments, ACLs, streams) hold no entry
            }
            position = try Reader.sum(position, 4, Int64(sized.count), Int64(dataSize))
        }
    }

    private static func file5(_ header: inout RarCursor, extra: [UInt8]) throws -> Entry {
        let fileFlags = try header.vint()
        _ = try header.vint()  // unpacked size
        _ = try header.vint()  // attributes
        if fileFlags & 0x0002 != 0 { try header.skip(4) }
        let crc = fileFlags & 0x0004 != 0 ? try header.u32() : nil
        _ = try header.vint()  // compression information
        _ = try header.vint()  // host system
        let name = try header.take(Int(try header.vint()))
        var records = RarCursor(extra, at: 0)
        while !records.atEnd {
            let size = Int(try records.vint())
            var record = RarCursor(try records.take(size), at: 0)
            if try record.vint() == 1 { throw Refusal(reason: .encryptedEntry, detail: "\(EscapedName(name)): entry is encrypted") }
        }
        return Entry(name: name, crc: fileFlags & 0x0001 != 0 ? nil : crc)
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
                if flags & 0x0001 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                if flags & 0x0080 != 0 { throw Refusal(reason: .encryptedEntry, detail: "the archive's headers are encrypted") }
            case 0x74:
                guard size >= 32 else { throw Refusal(reason: .corruptArchive, detail: "a file header cut short") }
                if flags & 0x0003 != 0 { throw Refusal(reason: .corruptArchive, detail: RarListing.multiVolume) }
                let large = flags & 0x0100 != 0 ? 8 : 0
                let nameLength = Int(header.u16(26))
                guard 32 + large + nameLength <= size else { throw Refusal(reason: .corruptArchive, detail: "a file name overruns its header") }
                if large != 0 { added |= Int64(header.u32(32)) << 32 }
                let name = Array(header[(32 + large)..<(32 + large + nameLength)])
                if flags & 0x0004 != 0 { throw Refusal(reason: .encryptedEntry, detail: "\(EscapedName(name)): entry is encrypted") }
                entries.append(Entry(name: name, crc: flags & 0x00E0 == 0x00E0 ? nil : header.u32(16)))
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
    /// What is wrong with the data just read for entry `index` of a RAR, by its listing; nil if nothing.
    func rarDataProblem(_ index: Int) -> String? {
        guard let listed = rarEntries else { return nil }
        guard index < listed.count else { return "libarchive yields more entries than the RAR headers list" }
        guard let crc = listed[index].crc, crc != dataCRC else { return nil }
        return "the data's CRC32 is \(String(dataCRC, radix: 16)), its header records \(String(crc, radix: 16))"
    }
}
