import AirlockChild
import AirlockFormats
import AirlockFraming
import AirlockPolicy
import AirlockSystem
import AirlockZip
import CArchive
import CLzma

/// Where a cpio archive, a cabinet and an ISO 9660 image end by their own
/// structures, and what may follow that end: only what the format itself
/// defines (zero padding to a block boundary, a signed cabinet's Authenticode
/// signature, a hybrid image's backup GPT). libarchive stops reading at the
/// end, so anything else there (a second cpio archive, which the Linux
/// initramfs unpacker reads; a ZIP, which ZIP readers find from the file's
/// end) is bytes another reader sees and airlock would drop unseen.
enum ArchiveEnd {
    typealias Reader = ZipDirectory.Reader
    typealias Failure = ZipDirectory.Failure

    /// Why nothing but zero bytes must lie from `start` to the end: the first byte that is not zero, or nil.
    static func firstNonZero(from start: Int64, to end: Int64, _ reader: Reader) throws(Failure) -> Int64? {
        var offset = start
        while offset < end {
            let count = Int(min(64 * 1024, end - offset))
            let bytes = try reader.bytes(at: offset, count: count)
            if let at = bytes.firstIndex(where: { $0 != 0 }) { return offset + Int64(at) }
            offset += Int64(count)
        }
        return nil
    }

    // MARK: cabinet

    /// A cabinet ends at cbCabinet (CFHEADER bytes 8–11). What follows may only be
    /// the Authenticode signature a signed cabinet keeps there, as signtool and
    /// osslsigncode write it: a 20-byte header reserve holding 0x00100000, the
    /// signature's offset (the cabinet's end) and its length (to the file's end),
    /// and a DER SEQUENCE at that offset.
    static func cabinet(_ reader: Reader) throws(Failure) -> String? {
        let header = try reader.bytes(at: 0, count: Int(min(reader.size, 60)))
        guard header.count >= 36 else { return "the cabinet header is cut short" }
        // 7-Zip refuses a cabinet whose reserved header fields are not zero; libarchive reads it.
        guard header.u32(12) == 0, header.u32(20) == 0 else { return "the cabinet header's reserved fields are not zero" }
        let end = Int64(header.u32(8))
        if end > reader.size { return "the cabinet is truncated: it ends at \(end), the drop at \(reader.size)" }
        guard end < reader.size else { return nil }
        let reserved = header.u16(30) & 0x0004 != 0
        if reserved, header.count >= 60, header.u16(36) == 20, header.u32(40) == 0x0010_0000, Int64(header.u32(44)) == end,
           end + Int64(header.u32(48)) == reader.size, try reader.bytes(at: end, count: 1) == [0x30] {
            return nil
        }
        return "\(reader.size - end) bytes follow the end of the cabinet, and they are not its signature"
    }

    // MARK: ISO 9660

    /// An image ends where its volume descriptors say (the volume space size in
    /// logical blocks). Past it only zeros may follow (padding to a cylinder
    /// or a device's block), and a hybrid image's backup GPT at the very end:
    /// its header in the last 512-byte sector, named by the primary header at
    /// sector 1, with valid CRCs, and its partition entries before it.
    static func image(_ reader: Reader) throws(Failure) -> String? {
        guard let end = try volumeEnd(reader) else { return "the image has no primary volume descriptor" }
        if end > reader.size { return "the image is truncated: its volume ends at \(end), the drop at \(reader.size)" }
        guard end < reader.size else { return nil }
        var stop = reader.size
        if let entries = try backupGPT(reader), entries >= end { stop = entries }
        if let junk = try firstNonZero(from: end, to: stop, reader) {
            return "\(reader.size - end) bytes follow the end of the ISO 9660 volume, not zero padding (byte \(junk))"
        }
        return nil
    }

    /// The largest volume space any primary or supplementary descriptor declares,
    /// in bytes; nil without a primary one. Each number is stored in both byte
    /// orders, which must agree (readers differ in the one they take).
    private static func volumeEnd(_ reader: Reader) throws(Failure) -> Int64? {
        var end: Int64?
        var sector = ArchiveFormat.isoDescriptorOffset
        for _ in 0..<64 {
            guard sector + 2048 <= reader.size else { return end }
            let descriptor = try reader.bytes(at: sector, count: 2048)
            guard ArchiveFormat.isISO9660Descriptor(descriptor), descriptor[0] != 255 else { return end }
            if descriptor[0] == 1 || descriptor[0] == 2 {
                let blocks = descriptor.u32(80), size = descriptor.u16(128)
                // Volume space size, set size, sequence number, block size, path table size: each twice.
                let agree = [80, 132].allSatisfy { descriptor.u32($0) == descriptor.u32BigEndian($0 + 4) }
                    && [120, 124, 128].allSatisfy { descriptor.u16($0) == UInt16(descriptor[$0 + 2]) << 8 | UInt16(descriptor[$0 + 3]) }
                guard agree else { throw .malformed("a volume descriptor's little- and big-endian numbers disagree") }
                end = max(end ?? 0, Int64(blocks) * Int64(size))
            }
            sector += 2048
        }
        return end
    }

    /// Where a valid backup GPT's partition entries start, when its header is the
    /// file's last sector and the primary header (sector 1) names it; else nil.
    private static func backupGPT(_ reader: Reader) throws(Failure) -> Int64? {
        guard reader.size >= 2048, reader.size % 512 == 0 else { return nil }
        let last = reader.size / 512 - 1
        let primary = try reader.bytes(at: 512, count: 512), backup = try reader.bytes(at: last * 512, count: 512)
        guard gptHeaderValid(primary), gptHeaderValid(backup), primary.u64(32) == UInt64(last), backup.u64(24) == UInt64(last) else {
            return nil
        }
        let count = Int64(backup.u32(80)), entrySize = Int64(backup.u32(84)), first = backup.u64(72)
        guard entrySize == 128, count > 0, count <= 1024, first < UInt64(last), Int64(first) + (count * 128 + 511) / 512 <= last else {
            return nil
        }
        let entries = try reader.bytes(at: Int64(first) * 512, count: Int(count * 128))
        guard lzma_crc32(entries, entries.count, 0) == backup.u32(88) else { return nil }
        return Int64(first) * 512
    }

    private static func gptHeaderValid(_ header: [UInt8]) -> Bool {
        guard header.starts(with: Array("EFI PART".utf8)) else { return false }
        let size = Int(header.u32(12))
        guard size >= 92, size <= header.count else { return false }
        var zeroed = Array(header[0..<size])
        zeroed.replaceSubrange(16..<20, with: [0, 0, 0, 0])
        return lzma_crc32(zeroed, zeroed.count, 0) == header.u32(16)
    }
}

/// What airlock's own reading of a cpio or an image says libarchive must yield.
struct EndListing {
    var cpio: CpioListing?
    /// An image's Joliet files, by path, with their sizes.
    var joliet: [ZipDirectory.NameKey: Int64]?
    /// An image's files by their Rock Ridge names, where its primary tree has them.
    var rockRidge: [ZipDirectory.NameKey: Int64]?
    /// An image's entries that Rock Ridge makes links, devices, pipes, sockets or
    /// compressed files (see IsoDirectories.rockRidgeSpecial).
    var rockRidgeSpecial: Set<ZipDirectory.NameKey> = []

    /// How the files libarchive yielded (an image's, by path) differ from the Joliet tree's, or the
    /// Rock Ridge names' (which isoinfo and Linux read); nil if they do not.
    func imageProblem(_ yielded: [ZipDirectory.NameKey: Int64?]) -> String? {
        // Without its SP entry libarchive reads no Rock Ridge, and yields a plain
        // regular file where isoinfo and Linux read a link or decompress a file.
        let specialFiles = rockRidgeSpecial.filter { path in
            if case .some(.some) = yielded[path] { return true }
            return false
        }.count
        if specialFiles > 0 {
            return "Rock Ridge (isoinfo, Linux) and libarchive differ: \(specialFiles) entries are links, devices or compressed files to the first, plain regular files to the second"
        }
        if let rockRidge, let problem = EndListing.differ(rockRidge, yielded, "the Rock Ridge names (isoinfo, Linux)") {
            return problem
        }
        return joliet.flatMap { EndListing.differ($0, yielded, "the Joliet tree (7-Zip, Windows)") }
    }

    private static func differ(_ joliet: [ZipDirectory.NameKey: Int64], _ yielded: [ZipDirectory.NameKey: Int64?],
                               _ tree: String) -> String? {
        var onlyJoliet = 0, onlyYielded = 0
        for (path, size) in joliet {
            // A link's size is not compared: Joliet has no links, only what the writer put in their place.
            guard let found = yielded[path] else { onlyJoliet += 1; continue }
            if let found, found != size { onlyJoliet += 1 }
        }
        for path in yielded.keys where joliet[path] == nil { onlyYielded += 1 }
        guard onlyJoliet + onlyYielded > 0 else { return nil }
        return "\(tree) and what libarchive reads differ: \(onlyJoliet) files only in the first, \(onlyYielded) only in the second"
    }
}

extension EntryScan {
    /// Notes an entry of an image that is not a directory: a regular file's size, nil for anything else.
    mutating func recordImageFile(_ yielded: [UInt8], kind: ConflictTracker.Kind, entry: OpaquePointer) {
        let key = ZipDirectory.NameKey(yielded)
        guard kind == .file else { imageFiles[key] = .some(nil); return }
        switch imageFiles[key] {
        case .none: imageFiles[key] = .some(archive_entry_size(entry))
        case .some(.some(let size)): imageFiles[key] = .some(size + archive_entry_size(entry))
        case .some(.none): break
        }
    }
}

extension ArchiveScan {
    /// Checks that a cpio, cabinet or ISO drop ends where its structures say,
    /// with only its format's padding after; false after recording why not.
    /// What libarchive must then yield is returned in `listing`.
    func checkEnd(_ file: DropFile, listing: inout EndListing?, _ outcome: inout ScanOutcome) -> Bool {
        let reader = ZipDirectory.Reader(file: file, size: dropSize)
        do throws(ZipDirectory.Failure) {
            var problem: String?
            var found = EndListing()
            switch format {
            case .cpio: found.cpio = try CpioListing(file, size: dropSize, limit: policy.maxEntries + 1)
            case .cab: problem = try ArchiveEnd.cabinet(reader)
            case .iso9660:
                problem = try ArchiveEnd.image(reader)
                let trees = try IsoDirectories(reader)
                found.joliet = trees.joliet
                found.rockRidge = trees.rockRidge
                found.rockRidgeSpecial = trees.rockRidgeSpecial
            default: break
            }
            listing = found
            guard let problem else { return true }
            outcome.findings.record(Violation(.corruptArchive, problem))
        } catch {
            switch error {
            case .malformed(let detail): outcome.findings.record(Violation(.corruptArchive, detail))
            case .tooManyEntries(let count): outcome.findings.record(Violation(.tooManyEntries, "\(count) entries"))
            case .unreadable(let failure):
                outcome.systemError = failure
                outcome.failedWhile = .readingDrop
            }
        }
        return false
    }
}
