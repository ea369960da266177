import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockText
import CArchive

/// What an archive's headers say it holds, for `airlock quarantine contents`:
/// each entry's escaped name, type, declared size and link target, read by the
/// same confined child and the same libarchive readers as a drop, with nothing
/// written anywhere and no entry judged, so a rejected archive is listed whole
/// (up to its first unreadable header).
enum ArchiveListing {
    /// The entries' JSON stops growing here, leaving room in the result pipe's
    /// limit for the rest of the verdict; the count goes on.
    static let maxListedBytes = 56 * 1024
    /// Headers read at most, however small each is.
    static let maxHeaders = 1_000_000

    static func run(_ scan: ArchiveScan) -> VerdictMessage {
        guard let archive = archive_read_new() else { return DecoderProgram.failure(SystemError("archive_read_new", nil, .outOfMemory)) }
        defer { archive_read_free(archive) }
        if let problem = scan.configure(archive) {
            return VerdictMessage(.listing(VerdictMessage.Listing(headers: nil, detail: problem.detail)))
        }
        let blockSize = (scan.format == .zip || scan.format == .sevenZip) ? ArchiveScan.seekableBlockSize : ArchiveScan.streamBlockSize
        // Opened exactly as a scan opens it: the same readers and decompressors.
        let file = DropFile(scan.drop)
        var outcome = ScanOutcome()
        var tar: TarStream? = nil
        var source: DropSource? = nil
        if scan.format.isTar {
            tar = scan.tarStream(file: file, blockSize: blockSize, outcome: &outcome)
        } else {
            source = DropSource(file: file, size: scan.dropSize, blockSize: blockSize)
        }
        guard tar != nil || source != nil, scan.open(archive, tar: tar, source: source, outcome: &outcome) else {
            let detail = outcome.findings.worst?.detail ?? outcome.systemError?.description ?? ArchiveScan.message(archive)
            return VerdictMessage(.listing(VerdictMessage.Listing(headers: nil, detail: detail)))
        }
        var listed: [ListedEntry] = []
        var listedBytes = 0
        var count: Int64 = 0
        var problem: String?
        while count < maxHeaders {
            var pointer: OpaquePointer?
            let status = archive_read_next_header(archive, &pointer)
            if status == ARCHIVE_EOF { break }
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry = pointer else {
                problem = ArchiveScan.message(archive)
                break
            }
            count += 1
            let item = describe(entry)
            listedBytes += item.jsonText.utf8.count + 1
            if listedBytes <= maxListedBytes { listed.append(item) }
        }
        let headers = VerdictMessage.Listing.Headers(entries: listed, count: count, truncated: Int64(listed.count) < count)
        return VerdictMessage(.listing(VerdictMessage.Listing(headers: headers, detail: problem)))
    }

    private static func describe(_ entry: OpaquePointer) -> ListedEntry {
        func bytes(_ text: UnsafePointer<CChar>) -> [UInt8] {
            [UInt8](cString: text)
        }
        let linked = archive_entry_symlink(entry) != nil || archive_entry_hardlink(entry) != nil
        let type: String
        switch UInt32(archive_entry_filetype(entry)) {
        case 0o100000 where !linked: type = "file"
        case 0o040000 where !linked: type = "directory"
        default: type = EntryScan.typeName(entry)
        }
        return ListedEntry(entry: EscapedName(archive_entry_pathname(entry).map(bytes) ?? []).text, entryType: type,
                           entrySize: archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil,
                           linkTarget: (archive_entry_symlink(entry) ?? archive_entry_hardlink(entry)).map { EscapedName(bytes($0)).text },
                           encrypted: archive_entry_is_encrypted(entry) != 0)
    }
}
