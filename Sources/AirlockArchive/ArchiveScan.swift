import AirlockChild
import AirlockFormats
import AirlockFraming
import AirlockPolicy
import AirlockSystem
import AirlockText
import AirlockZip
import CArchive

/// What a scan found and wrote.
public struct ScanOutcome: Sendable {
    public var findings = Findings()
    public var entries = 0
    public var files: Int64 = 0
    public var directories: Int64 = 0
    /// Bytes handed to the sink before the first violation.
    public var bytesWritten: Int64 = 0
    /// A failure of the machine (disk full, permissions, a disk fault), not of the input.
    public var systemError: SystemError?
    /// What the decoder was doing when `systemError` happened.
    public var failedWhile: SystemFailureStage = .writingStaging
}

/// Reads one archive with libarchive, judges every header against the policy
/// before its data is written, counts actual bytes chunk by chunk against the
/// remaining allowance, and hands what passes to a sink.
///
/// After the first violation nothing more is written, but the rest of the
/// archive is still read (headers judged, data counted and checksummed) so the
/// reported reason is the one of highest precedence in the whole archive, the
/// same whatever the entry order.
public struct ArchiveScan {
    public let format: ArchiveFormat
    public let policy: Policy
    public let drop: FileDescriptor
    public let dropSize: Int64
    /// Whether to report progress on the result pipe.
    public var reportsProgress = false
    /// How names that are not UTF-8 are decoded.
    public let legacyNames: LegacyNames

    /// Read size for the raw drop. Small enough that the per-entry compressed
    /// size estimate of a stream (raw bytes consumed, plus one block of slack)
    /// still catches a 4 MiB bomb at a 100x limit.
    static let streamBlockSize = 16 * 1024
    static let seekableBlockSize = 64 * 1024

    public init(format: ArchiveFormat, policy: Policy, drop: FileDescriptor, dropSize: Int64, legacyNames: LegacyNames) {
        self.legacyNames = legacyNames
        self.format = format
        self.policy = policy
        self.drop = drop
        self.dropSize = dropSize
    }

    public func run<Sink: EntrySink>(into sink: inout Sink) -> ScanOutcome {
        var outcome = ScanOutcome()
        defer { sink.close() }
        let file = DropFile(drop)
        guard var listings = listings(file, outcome: &outcome) else { return outcome }
        guard let archive = archive_read_new() else {
            outcome.systemError = SystemError("archive_read_new", nil, .outOfMemory)
            return outcome
        }
        defer { archive_read_free(archive) }
        if let problem = configure(archive) {
            outcome.findings.record(problem)
            return outcome
        }
        let blockSize = (format == .zip || format == .sevenZip) ? ArchiveScan.seekableBlockSize : ArchiveScan.streamBlockSize
        var tar: TarStream? = nil
        var source: DropSource? = nil
        if format.isTar {
            guard let opened = tarStream(file: file, blockSize: blockSize, outcome: &outcome) else { return outcome }
            tar = opened
        } else {
            source = DropSource(file: file, size: dropSize, blockSize: blockSize)
        }
        // A failed read of the drop is the machine's fault, whatever libarchive made of it.
        func settled(_ outcome: ScanOutcome) -> ScanOutcome {
            guard let failure = source?.readError ?? tar?.readError else { return outcome }
            var outcome = outcome
            outcome.systemError = failure
            outcome.failedWhile = .readingDrop
            return outcome
        }
        guard open(archive, tar: tar, source: source, outcome: &outcome) else { return settled(outcome) }
        readEntries(archive, stream: StreamPosition(archive: archive, tar: tar, source: source), blockSize: blockSize,
                    listings: &listings, into: &sink, outcome: &outcome)
        return settled(outcome)
    }

    /// What a format's own listing says of the entries libarchive will yield.
    private struct Listings {
        /// A ZIP's central directory, by name, each taken as libarchive yields it.
        var expected: [ZipDirectory.NameKey: ZipDirectory.Entry]?
        var sevenZipEntries: Int?
        var sevenZipNames: [[UInt8]]?
        var sevenZipDirectories: [Bool]?
        var rar: RarListing?
        var ends: EndListing?
    }

    /// The listings of a ZIP, 7z or RAR, checked before libarchive reads a
    /// header; nil when the scan ends there, after recording why.
    private func listings(_ file: DropFile, outcome: inout ScanOutcome) -> Listings? {
        var listings = Listings()
        switch format {
        case .zip:
            guard let directory = zipDirectory(file, outcome: &outcome) else { return nil }
            listings.expected = directory.byName
        case .sevenZip:
            guard case .passed(let header) = checkSevenZip(file, &outcome) else { return nil }
            listings.sevenZipEntries = header?.fileCount
            listings.sevenZipNames = header.flatMap { $0.names.isEmpty ? nil : $0.names }
            listings.sevenZipDirectories = header?.directories
        case .rar:
            guard let listing = checkRar(file, &outcome) else { return nil }
            listings.rar = listing
        case .cpio, .cab, .iso9660:
            guard checkEnd(file, listing: &listings.ends, &outcome) else { return nil }
        default:
            break
        }
        return listings
    }

    /// Reads every header of the opened `archive`, then checks that the listings
    /// hold nothing libarchive did not yield.
    private func readEntries<Sink: EntrySink>(_ archive: OpaquePointer, stream: StreamPosition, blockSize: Int, listings: inout Listings,
                                              into sink: inout Sink, outcome: inout ScanOutcome) {
        let tar = stream.tar
        var entryScan = EntryScan(archive: archive, policy: policy, blockSize: Int64(blockSize), stream: stream)
        if reportsProgress { entryScan.reporter = ProgressReporter(total: dropSize) }
        entryScan.sevenZipNames = listings.sevenZipNames
        entryScan.sevenZipDirectories = listings.sevenZipDirectories
        entryScan.legacyNames = legacyNames
        entryScan.format = format
        entryScan.rarEntries = listings.rar?.entries
        if format == .zip { entryScan.inflater = ZipInflater(file: DropFile(drop), dropSize: dropSize, blockSize: blockSize) }
        entryScan.readEntries(into: &sink, expected: &listings.expected, outcome: &outcome)
        if entryScan.reachedEnd {
            judgeEnd(tar: tar, sevenZipEntries: listings.sevenZipEntries ?? listings.rar?.entries.count ?? listings.ends?.cpio?.entries.count,
                     outcome: &outcome)
            if let problem = listings.ends?.imageProblem(entryScan.imageFiles) { outcome.findings.record(Violation(.corruptArchive, problem)) }
        }
        if let remaining = listings.expected, !remaining.isEmpty, outcome.systemError == nil {
            let missing = remaining.values.map(\.name).min { $0.lexicographicallyPrecedes($1) }!
            outcome.findings.record(Violation(.corruptArchive, "the central directory lists an entry the archive does not yield",
                                              entry: missing))
        }
    }

    /// Opens `archive` on the drop: through `tar` for a tar, `source` otherwise;
    /// false after recording why it cannot be.
    func open(_ archive: OpaquePointer, tar: TarStream?, source: DropSource?, outcome: inout ScanOutcome) -> Bool {
        let opened = tar?.attach(to: archive) ?? source!.attach(to: archive)
        guard opened != ARCHIVE_OK else { return true }
        if let failure = tar?.failure {
            outcome.findings.record(Violation(.corruptArchive, failure))
        } else if archive_errno(archive) == Errno.illegalByteSequence.rawValue {
            // No reader recognised the (decompressed) bytes: a gzip of something not a tar.
            outcome.findings.record(Violation(.unsupportedFormat, ArchiveScan.message(archive)))
        } else {
            outcome.findings.record(Violation(.corruptArchive, ArchiveScan.message(archive)))
        }
        return false
    }

    /// What the second reader says once libarchive has reached the archive's
    /// end: the tar framing about the rest of the stream, or the 7z header
    /// about how many entries there are.
    private func judgeEnd(tar: TarStream?, sevenZipEntries: Int?, outcome: inout ScanOutcome) {
        if let tar, let problem = tar.finish() {
            outcome.findings.record(Violation(.corruptArchive, problem))
        }
        if let listed = sevenZipEntries, listed != outcome.entries {
            outcome.findings.record(Violation(.corruptArchive, "the \(format.rawValue) headers list \(listed) entries, libarchive yields \(outcome.entries)"))
        }
    }

    /// Enables exactly the reader the sniffed format calls for, and no external programs.
    func configure(_ archive: OpaquePointer) -> Violation? {
        var status: Int32
        switch format {
        case .zip: status = archive_read_support_format_zip_seekable(archive)
        case .sevenZip: status = archive_read_support_format_7zip(archive)
        case .tar, .tarGzip, .tarBzip2, .tarXz, .tarZstd, .tarLzip, .tarLzma:
            // Decompression happens in the TarStream's decoder, outside this reader,
            // which reads only up to the first end-of-archive block; TarStream.finish
            // judges the rest.
            status = archive_read_support_format_tar(archive)
        case .rar, .iso9660, .cab, .cpio: status = format.optionalReaderStatus(archive)!
        }
        guard status == ARCHIVE_OK else { return Violation(.unsupportedFormat, ArchiveScan.message(archive)) }
        return nil
    }

    /// The stream of a tar drop's bytes, or nil after recording why there is
    /// none. Its decoder is igzip for gzip, which checks each member's trailer
    /// where libarchive's gzip filter does not, and libarchive's filters for the
    /// other compressors, which check theirs.
    func tarStream(file: DropFile, blockSize: Int, outcome: inout ScanOutcome) -> TarStream? {
        switch format {
        case .tar: return TarStream(decoder: PlainSource(file: file, blockSize: blockSize))
        case .tarGzip: return TarStream(decoder: GzipSource(file: file, blockSize: blockSize))
        default:
            switch FilterSource.open(format, file: file, dropSize: dropSize, blockSize: blockSize) {
            case .success(let decoder): return TarStream(decoder: decoder)
            case .failure(.unsupported(let detail)): outcome.findings.record(Violation(.unsupportedFormat, detail))
            case .failure(.corrupt(let detail)): outcome.findings.record(Violation(.corruptArchive, detail))
            case .failure(.system(let error)): outcome.systemError = error
            case .failure(.unreadable(let error)):
                outcome.systemError = error
                outcome.failedWhile = .readingDrop
            }
            return nil
        }
    }

    private enum SevenZipCheck {
        /// With the header airlock read; nil when it is encrypted, which libarchive reports.
        case passed(SevenZipHeader?)
        case failed
    }

    /// Checks a 7z drop ends where its signature header says and its header
    /// holds no deletion markers; `.failed` after recording why not.
    private func checkSevenZip(_ file: DropFile, _ outcome: inout ScanOutcome) -> SevenZipCheck {
        do {
            if let problem = try SevenZipEnd.problem(drop: file, dropSize: dropSize) {
                outcome.findings.record(Violation(.corruptArchive, problem))
                return .failed
            }
            switch try SevenZipHeader.read(drop: file, dropSize: dropSize) {
            case .failure(let failure):
                outcome.findings.record(Violation(failure.reason, failure.detail, entry: failure.entry))
                return .failed
            case .success(let header):
                guard let anti = header?.antiItems.min(by: { $0.lexicographicallyPrecedes($1) }) else {
                    return .passed(header)
                }
                outcome.findings.record(Violation(.corruptArchive,
                    "a deletion marker (7z anti-item): 7-Zip deletes this file, libarchive yields an empty one", entry: anti))
                return .failed
            }
        } catch {
            outcome.systemError = error
            outcome.failedWhile = .readingDrop
            return .failed
        }
    }

    static func message(_ archive: OpaquePointer, stream: StreamPosition? = nil) -> String {
        if let failure = stream?.tar?.failure { return failure }
        guard let text = archive_error_string(archive) else { return "libarchive error \(archive_errno(archive))" }
        var bytes = [UInt8](cString: text)
        while let last = bytes.last, last == 0x0A || last == 0x20 { bytes.removeLast() }
        return EscapedName(bytes).text
    }
}

/// Writes `{"progress":N,"total":M}` lines to the result pipe, at most every 250 ms.
struct ProgressReporter {
    let total: Int64
    private var next: UInt64 = 0
    private let interval: UInt64

    init(total: Int64) {
        self.total = total
        var interval: UInt64 = 250_000_000
        #if DEBUG
        // Test-only: a shorter interval, so a test need not decode for long.
        if let text = CurrentProcess.environment("AIRLOCK_TEST_PROGRESS_INTERVAL_MS"), let milliseconds = UInt64(text) {
            interval = milliseconds * 1_000_000
        }
        #endif
        self.interval = interval
        next = monotonicNanoseconds() + interval
    }

    mutating func report(_ done: Int64) {
        let now = monotonicNanoseconds()
        guard now >= next else { return }
        next = now + interval
        try? Confinement.resultDescriptor.writeAll(Array("{\"progress\":\(max(done, 0)),\"total\":\(total)}\n".utf8))
    }
}

/// How far into the raw drop the reader is, and why the raw stream failed.
struct StreamPosition {
    let archive: OpaquePointer
    let tar: TarStream?
    /// The drop as a seekable reader (ZIP, 7z and the optional formats) reads it.
    let source: DropSource?

    /// Where in the raw (compressed) drop the reader is, for progress. A
    /// seekable reader moves it back as well as forth.
    var consumed: Int64 { tar?.consumed ?? archive_filter_bytes(archive, -1) }

    /// Raw bytes read from the drop so far, which only grows: what an entry's
    /// data took is its growth over the entry, whatever seeks came between. A
    /// tar's decoder reads forward only.
    var read: Int64 { tar?.consumed ?? source?.delivered ?? archive_filter_bytes(archive, -1) }
}

/// Judges a ZIP's central directory before anything is extracted.
struct Preflight {
    let policy: Policy

    func judge(_ directory: ZipDirectory) -> Findings {
        var findings = Findings()
        if !policy.admitsEntries(directory.entries.count) {
            findings.record(Violation(.tooManyEntries, "\(directory.entries.count) entries exceed \(policy.maxEntries)"))
        }
        var tracker = ConflictTracker()
        var declaredTotal: Int64 = 0
        for (index, entry) in directory.entries.enumerated() {
            let kind: ConflictTracker.Kind
            switch entry.unixType {
            case nil: kind = entry.isDirectoryName ? .directory : .file
            case 0o040000?: kind = .directory
            case 0o100000?: kind = entry.isDirectoryName ? .directory : .file
            default: kind = .other
            }
            var judge = EntryJudge(policy: policy, raw: entry.landingName, index: index)
            if let encoding = entry.legacyEncoding { judge.stored = (entry.name, encoding) }
            let path = judge.validate(kind: kind, findings: &findings)
            if let path { judge.checkConflicts(path, kind: kind, tracker: &tracker, findings: &findings) }
            if kind == .other {
                findings.record(judge.violation(.unsupportedEntryType, "links, devices and other special files are not accepted"))
            }
            if entry.isEncrypted { findings.record(judge.violation(.encryptedEntry, "entry is encrypted")) }
            if kind == .file {
                if entry.uncompressedSize > policy.maxFileBytes {
                    findings.record(judge.violation(.fileTooLarge,
                        "declares \(entry.uncompressedSize) bytes, over the \(policy.maxFileBytes)-byte limit"))
                }
                if policy.breaksRatio(size: entry.uncompressedSize, compressed: entry.compressedSize) {
                    findings.record(judge.violation(.ratioTooHigh,
                        "declares \(entry.uncompressedSize) bytes from \(entry.compressedSize) compressed"))
                }
                // Saturating: the sum only has to tell whether it passes the limit.
                let (sum, overflow) = declaredTotal.addingReportingOverflow(entry.uncompressedSize)
                declaredTotal = overflow ? Int64.max : sum
            }
        }
        if declaredTotal > policy.maxTotalBytes {
            findings.record(Violation(.totalTooLarge, "entries declare more than \(policy.maxTotalBytes) bytes in all"))
        }
        return findings
    }
}

/// Per-entry judgements shared by the ZIP preflight and the streaming scan.
struct EntryJudge {
    let policy: Policy
    let raw: [UInt8]
    let index: Int

    /// The bytes the archive stores the name as, and their encoding, when `raw` was decoded from them.
    var stored: (bytes: [UInt8], encoding: String)?

    init(policy: Policy, raw: [UInt8], index: Int) {
        self.policy = policy
        self.raw = raw
        self.index = index
    }

    func violation(_ reason: Reason, _ detail: String) -> Violation {
        Violation(reason, detail + (stored.map { LegacyNames.storedNote($0.bytes, encoding: $0.encoding) } ?? ""), entry: raw, index: index)
    }

    /// The validated path, or nil after recording why it is not one. A name with a
    /// trailing `/` must be a directory.
    func validate(kind: ConflictTracker.Kind, findings: inout Findings) -> EntryPath? {
        do {
            let path = try EntryPath(validating: raw, policy: policy)
            if path.hasTrailingSlash && kind != .directory {
                findings.record(violation(.unsafePath, "a non-directory whose name ends with '/'"))
                return nil
            }
            return path
        } catch {
            findings.record(violation(error.reason, error.detail))
            return nil
        }
    }

    func checkConflicts(_ path: EntryPath, kind: ConflictTracker.Kind, tracker: inout ConflictTracker, findings: inout Findings) {
        if let conflict = tracker.record(path, as: kind) {
            var violation = Violation(conflict.reason, conflict.detail, entry: conflict.entry ?? raw, index: index)
            violation.other = conflict.other
            findings.record(violation)
        }
    }
}
