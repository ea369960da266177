#if canImport(Glibc)
import Glibc
#endif
import AirlockPolicy
import AirlockSystem
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

    /// Read size for the raw drop. Small enough that the per-entry compressed
    /// size estimate of a stream (raw bytes consumed, plus one block of slack)
    /// still catches a 4 MiB bomb at a 100x limit.
    static let streamBlockSize = 16 * 1024
    static let seekableBlockSize = 64 * 1024

    public init(format: ArchiveFormat, policy: Policy, drop: FileDescriptor, dropSize: Int64) {
        self.format = format
        self.policy = policy
        self.drop = drop
        self.dropSize = dropSize
    }

    public func run<Sink: EntrySink>(into sink: inout Sink) -> ScanOutcome {
        var outcome = ScanOutcome()
        defer { sink.close() }
        var expected: [ZipDirectory.NameKey: ZipDirectory.Entry]? = nil
        let file = DropFile(drop)
        if format == .zip {
            let directory: ZipDirectory
            do {
                directory = try ZipDirectory(file: file, fileSize: dropSize, maxEntries: policy.maxEntries)
            } catch {
                switch error {
                case .tooManyEntries(let count):
                    outcome.findings.record(Violation(.tooManyEntries, "\(count) entries exceed \(policy.maxEntries)"))
                case .malformed(let detail):
                    outcome.findings.record(Violation(.corruptArchive, detail))
                case .unreadable(let failure):
                    outcome.systemError = failure
                    outcome.failedWhile = .readingDrop
                }
                return outcome
            }
            let preflight = Preflight(policy: policy).judge(directory)
            outcome.findings = preflight
            guard preflight.isClean else { return outcome }
            // An archive of no entries is only its end record (libarchive's seekable
            // reader does not recognise one): nothing more to read.
            if directory.entries.isEmpty { return outcome }
            expected = directory.byName
        }
        guard let archive = archive_read_new() else {
            outcome.systemError = SystemError("archive_read_new", nil, Errno(rawValue: ENOMEM))
            return outcome
        }
        defer { archive_read_free(archive) }
        if let problem = configure(archive) {
            outcome.findings.record(problem)
            return outcome
        }
        let blockSize = (format == .zip || format == .sevenZip) ? ArchiveScan.seekableBlockSize : ArchiveScan.streamBlockSize
        let gzip = format == .tarGzip ? GzipSource(file: file, blockSize: blockSize) : nil
        let source = gzip == nil ? DropSource(file: file, size: dropSize, blockSize: blockSize) : nil
        let opened = gzip?.attach(to: archive) ?? source!.attach(to: archive)
        // A failed read of the drop is the machine's fault, whatever libarchive made of it.
        var readError: SystemError? { source?.readError ?? gzip?.readError }
        guard opened == ARCHIVE_OK else {
            if let failure = readError {
                outcome.systemError = failure
                outcome.failedWhile = .readingDrop
                return outcome
            }
            if let failure = gzip?.failure {
                outcome.findings.record(Violation(.corruptArchive, failure))
            } else if archive_errno(archive) == EILSEQ {
                // No reader recognised the (decompressed) bytes: a gzip of something not a tar.
                outcome.findings.record(Violation(.unsupportedFormat, ArchiveScan.message(archive)))
            } else {
                outcome.findings.record(Violation(.corruptArchive, ArchiveScan.message(archive)))
            }
            return outcome
        }
        let stream = StreamPosition(archive: archive, gzip: gzip)
        var entryScan = EntryScan(archive: archive, policy: policy, blockSize: Int64(blockSize), stream: stream)
        if reportsProgress { entryScan.reporter = ProgressReporter(total: dropSize) }
        entryScan.readEntries(into: &sink, expected: &expected, outcome: &outcome)
        if let failure = readError {
            outcome.systemError = failure
            outcome.failedWhile = .readingDrop
        }
        if let remaining = expected, !remaining.isEmpty, outcome.systemError == nil {
            let missing = remaining.values.map(\.name).min { $0.lexicographicallyPrecedes($1) }!
            outcome.findings.record(Violation(.corruptArchive, "the central directory lists an entry the archive does not yield",
                                              entry: missing))
        }
        return outcome
    }

    /// Enables exactly the reader the sniffed format calls for, and no external programs.
    func configure(_ archive: OpaquePointer) -> Violation? {
        var status: Int32
        switch format {
        case .zip: status = archive_read_support_format_zip_seekable(archive)
        case .sevenZip: status = archive_read_support_format_7zip(archive)
        case .tar, .tarGzip, .tarBzip2, .tarXz, .tarZstd:
            status = archive_read_support_format_tar(archive)
            // Read past the end-of-archive blocks to the true end of the stream, so
            // the decompressor reaches (and checks) its trailer, and anything hidden
            // after the end marker is judged like any other entry.
            if status == ARCHIVE_OK { status = archive_read_set_format_option(archive, "tar", "read_concatenated_archives", "1") }
        }
        guard status == ARCHIVE_OK else { return Violation(.unsupportedFormat, ArchiveScan.message(archive)) }
        switch format {
        case .tarGzip: status = ARCHIVE_OK  // zlib through GzipSource, which checks the trailer
        case .tarBzip2: status = archive_read_support_filter_bzip2(archive)
        case .tarXz: status = archive_read_support_filter_xz(archive)
        case .tarZstd: status = archive_read_support_filter_zstd(archive)
        default: status = ARCHIVE_OK
        }
        // ARCHIVE_WARN here means libarchive would run an external program: refuse.
        guard status == ARCHIVE_OK else {
            return Violation(.unsupportedFormat, "this libarchive has no built-in \(format.rawValue) decompressor")
        }
        return nil
    }

    static func message(_ archive: OpaquePointer, stream: StreamPosition? = nil) -> String {
        if let failure = stream?.gzip?.failure { return failure }
        guard let text = archive_error_string(archive) else { return "libarchive error \(archive_errno(archive))" }
        var bytes = Array(UnsafeBufferPointer(start: text, count: strlen(text))).map { UInt8(bitPattern: $0) }
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
        if let text = getenv("AIRLOCK_TEST_PROGRESS_INTERVAL_MS"), let milliseconds = UInt64(String(cString: text)) {
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
    let gzip: GzipSource?

    /// Raw (compressed) bytes consumed so far.
    var consumed: Int64 { gzip?.consumed ?? archive_filter_bytes(archive, -1) }
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
            let judge = EntryJudge(policy: policy, raw: entry.name, index: index)
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

    func violation(_ reason: Reason, _ detail: String) -> Violation {
        Violation(reason, detail, entry: raw, index: index)
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
