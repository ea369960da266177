import AirlockChild
import AirlockFormats
import AirlockFraming
import AirlockPolicy
import AirlockSystem
import AirlockText
import AirlockZip
import CArchive

/// The header-by-header loop over an open libarchive reader.
struct EntryScan {
    let archive: OpaquePointer
    let policy: Policy
    let blockSize: Int64
    let stream: StreamPosition
    /// Reports progress on the result pipe, at most four times a second.
    var reporter: ProgressReporter?
    /// A 7z archive's entry names as its header holds them, in order.
    var sevenZipNames: [[UInt8]]?
    /// Whether 7-Zip takes each entry of a 7z for a directory, in header order.
    var sevenZipDirectories: [Bool]?
    /// Decodes tar names that are not UTF-8, when the operator names an encoding.
    var legacyNames: LegacyNames?
    /// The format being read, for the few rules that depend on it (OptionalFormats.swift).
    var format: ArchiveFormat?
    /// A RAR's own listing, which each yielded entry and its data's CRC32 must match.
    var rarEntries: [RarListing.Entry]?
    /// The CRC32 of the current entry's data so far, kept for a RAR.
    var dataCRC: UInt32 = 0
    /// Inflates a ZIP's deflate entries in place of libarchive's zlib.
    var inflater: ZipInflater?
    /// An image's entries other than directories as libarchive yields them, by
    /// path, with a regular file's size (nil for a link, whose Joliet size is the
    /// target's or none).
    var imageFiles: [ZipDirectory.NameKey: Int64?] = [:]
    private var tracker = ConflictTracker()
    /// The file, total and ratio quotas, counted chunk by chunk across entries.
    var allowance: ByteAllowance
    /// True once libarchive has reported the archive's end, and not an error.
    private(set) var reachedEnd = false

    init(archive: OpaquePointer, policy: Policy, blockSize: Int64, stream: StreamPosition) {
        self.archive = archive
        self.stream = stream
        self.policy = policy
        self.blockSize = blockSize
        allowance = ByteAllowance(policy: policy)
    }

    /// Reads every header and, while the findings stay clean, lands each entry
    /// through `sink`; stops at the archive's end or at the first finding that
    /// ends the scan.
    mutating func readEntries<Sink: EntrySink>(into sink: inout Sink, expected: inout [ZipDirectory.NameKey: ZipDirectory.Entry]?,
                                               outcome: inout ScanOutcome) {
        var index = 0
        while true {
            guard let entry = nextHeader(index: index, outcome: &outcome) else { return }
            let yielded: [UInt8] = archive_entry_pathname(entry).map { [UInt8](cString: $0) } ?? []
            if isImageRoot(yielded, entry) { continue }
            if let problem = rarHeaderProblem(index, yielded: yielded, entry: entry) {
                outcome.findings.record(Violation(.corruptArchive, problem, entry: yielded, index: index))
                return
            }
            guard let named = name(yielded, index: index, expected: &expected, findings: &outcome.findings) else { return }
            var judge = EntryJudge(policy: policy, raw: named.raw, index: index)
            if let listed = named.listed, let encoding = listed.legacyEncoding { judge.stored = (listed.name, encoding) }
            if named.framed != nil { judgeTarName(named.raw, judge: &judge, findings: &outcome.findings) }
            index += 1
            outcome.entries = index

            let kind = EntryScan.kind(of: entry)
            if format == .iso9660 && kind != .directory { recordImageFile(yielded, kind: kind, entry: entry) }
            if let framed = named.framed, !crossCheck(framed, kind: kind, entry: entry, judge: judge, findings: &outcome.findings) { return }
            if let directories = sevenZipDirectories, index - 1 < directories.count, directories[index - 1] != (kind == .directory) {
                let reading = directories[index - 1] ? "7-Zip reads a directory, libarchive a file" : "7-Zip reads a file, libarchive a directory"
                outcome.findings.record(judge.violation(.corruptArchive, "the 7z header's kind of entry disagrees: \(reading)"))
                return
            }
            // A tar's `./` directory is where it extracts: counted, nothing to judge or make.
            if named.extractionRoot && kind == .directory { continue }
            let path = judge.validate(kind: kind, findings: &outcome.findings)
            if let path { judge.checkConflicts(path, kind: kind, tracker: &tracker, findings: &outcome.findings) }
            if kind == .other {
                outcome.findings.record(judge.violation(.unsupportedEntryType, "\(EntryScan.typeName(entry)) entries are not accepted"))
            }
            if archive_entry_is_encrypted(entry) != 0 {
                outcome.findings.record(judge.violation(.encryptedEntry, "entry is encrypted"))
            }
            guard let sizes = sizes(of: entry, kind: kind, listed: named.listed, judge: judge, findings: &outcome.findings),
                  land(kind, at: path, index: index - 1, judge: judge, sizes: sizes, sink: &sink, outcome: &outcome) else { return }
        }
    }

    /// The next header, or nil at the archive's end or when the scan must stop
    /// there (a header libarchive cannot read, one entry too many).
    private mutating func nextHeader(index: Int, outcome: inout ScanOutcome) -> OpaquePointer? {
        var entryPointer: OpaquePointer?
        let status = archive_read_next_header(archive, &entryPointer)
        if status == ARCHIVE_EOF {
            reachedEnd = true
            if let tar = stream.tar, let unsupported = tar.framing.unsupported {
                outcome.findings.record(Violation(.unsupportedEntryType, "tar type \(unsupported.typeFlag) is not accepted",
                                                  entry: unsupported.name))
            }
            return nil
        }
        guard status == ARCHIVE_OK, let entry = entryPointer else {
            outcome.findings.record(headerFailure(status: status, index: index))
            return nil
        }
        guard policy.admitsEntries(index + 1) else {
            outcome.findings.record(Violation(.tooManyEntries, "more than \(policy.maxEntries) entries"))
            return nil
        }
        return entry
    }

    /// An entry's name as the scan judges and writes it, and the other readers'
    /// records of the same entry.
    private struct NamedEntry {
        /// The ZIP central directory's record of the entry.
        var listed: ZipDirectory.Entry?
        /// `TarFraming`'s record of the entry's headers.
        var framed: TarFraming.Entry?
        var raw: [UInt8]
        /// A tar's `./`: the directory the archive extracts into.
        var extractionRoot = false
    }

    /// The name an entry lands under, checked against the other reader of the
    /// same bytes; nil when they disagree, after recording why.
    private func name(_ yielded: [UInt8], index: Int, expected: inout [ZipDirectory.NameKey: ZipDirectory.Entry]?,
                      findings: inout Findings) -> NamedEntry? {
        var listed: ZipDirectory.Entry?
        if expected != nil {
            guard let found = expected!.removeValue(forKey: ZipDirectory.NameKey(yielded)) else {
                findings.record(Violation(.corruptArchive, "entry is not in the central directory, or appears twice",
                                          entry: yielded, index: index))
                return nil
            }
            listed = found
        }
        var framed: TarFraming.Entry?
        if let tar = stream.tar {
            guard let entry = takeFramed(tar, yielded: yielded, index: index, findings: &findings) else { return nil }
            framed = entry
        }
        var headerName: [UInt8]?
        if let names = sevenZipNames {
            guard let name = EntryScan.sevenZipName(names, yielded: yielded, index: index, findings: &findings) else { return nil }
            headerName = name
        }
        // An entry lands under the name its archive holds: a ZIP's as its
        // directory holds it, decoded as its ZipName says; a tar's as its headers
        // spell it, decoded if it is not UTF-8; a 7z's as its header holds it.
        var named = NamedEntry(listed: listed, framed: framed, raw: listed?.landingName ?? framed?.name ?? headerName ?? yielded)
        if framed != nil {
            switch TarEntryNames.relative(named.raw) {
            case .extractionRoot: named.extractionRoot = true
            case .name(let relative): named.raw = relative
            }
        }
        return named
    }

    /// What the conflict tracker and the sink make of an entry's type.
    private static func kind(of entry: OpaquePointer) -> ConflictTracker.Kind {
        let fileType = UInt32(archive_entry_filetype(entry))
        if archive_entry_hardlink(entry) != nil || archive_entry_symlink(entry) != nil {
            return .other
        } else if fileType == 0o100000 {
            return .file
        } else if fileType == 0o040000 {
            return .directory
        }
        return .other
    }

    /// The sizes an entry's data is judged by.
    struct EntrySizes {
        /// The uncompressed size its headers declare, where they do.
        var declared: Int64?
        /// Its compressed size, where the format records one (a ZIP's directory).
        var compressed: Int64?
        var sparse: Bool
        /// A ZIP entry's deflate data, which the scan inflates itself.
        var deflate: DeflateData?
    }

    /// The entry's declared sizes, the ZIP directory's taking precedence; nil
    /// when the local header and the directory disagree, after recording why.
    private func sizes(of entry: OpaquePointer, kind: ConflictTracker.Kind, listed: ZipDirectory.Entry?, judge: EntryJudge,
                       findings: inout Findings) -> EntrySizes? {
        var sizes = EntrySizes(declared: archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil,
                               compressed: nil, sparse: archive_entry_sparse_count(entry) > 0)
        if let listed {
            sizes.compressed = listed.compressedSize
            if kind == .file {
                sizes.deflate = DeflateData(listed)
                if let size = sizes.declared, size != listed.uncompressedSize {
                    findings.record(judge.violation(.corruptArchive, "local and central sizes disagree"))
                    return nil
                }
                sizes.declared = listed.uncompressedSize
            }
        }
        if kind == .file, let size = sizes.declared, size > policy.maxFileBytes {
            findings.record(judge.violation(.fileTooLarge, "declares \(size) bytes, over the \(policy.maxFileBytes)-byte limit"))
        }
        return sizes
    }

    /// The size a file is begun with (a writer may reserve it): what its archive
    /// declares, where the entry could write that much within the file, total
    /// and ratio allowances; nil otherwise, and for a sparse entry, whose
    /// declared size counts holes. A hostile declaration so gets no more space
    /// reserved than its data would be let to fill.
    private func sizeHint(_ sizes: EntrySizes, outcome: ScanOutcome) -> Int64? {
        guard !sizes.sparse, let declared = sizes.declared, declared <= policy.maxFileBytes,
              declared <= policy.maxTotalBytes - outcome.bytesWritten else { return nil }
        if let compressed = sizes.compressed, policy.breaksRatio(size: declared, compressed: compressed) { return nil }
        return declared
    }

    /// Makes a directory, or reads a file's data and writes it while the findings
    /// are clean; false when the scan must stop.
    private mutating func land<Sink: EntrySink>(_ kind: ConflictTracker.Kind, at path: EntryPath?, index: Int, judge: EntryJudge,
                                                sizes: EntrySizes, sink: inout Sink, outcome: inout ScanOutcome) -> Bool {
        let writing = outcome.findings.isClean && outcome.systemError == nil
        switch kind {
        case .directory:
            if writing, let path {
                do { try sink.makeDirectory(path); outcome.directories += 1 } catch { outcome.systemError = error; return false }
            }
        case .file:
            if writing, let path {
                do { try sink.beginFile(path, size: sizeHint(sizes, outcome: outcome)) } catch { outcome.systemError = error; return false }
            }
            let end = readData(judge: judge, sizes: sizes, writing: writing, sink: &sink, outcome: &outcome)
            if end == .complete, let problem = rarDataProblem(index) { outcome.findings.record(judge.violation(.corruptArchive, problem)) }
            if writing, path != nil {
                do { try sink.endFile() } catch { outcome.systemError = error; return false }
                if outcome.findings.isClean { outcome.files += 1 }
            }
            if end == .stop { return false }
        case .other:
            break
        }
        return true
    }

    /// The entry `TarFraming` took of the header libarchive has just read, whose
    /// name is the one the scan judges and writes; nil when the two readers
    /// disagree, after recording why.
    ///
    /// libarchive's name must be the framing's bytes, or canonically equivalent
    /// to them (libarchive turns pax names into NFC). A name holding a NUL is
    /// the exception: libarchive cannot hold it and cuts it short, and the name
    /// policy refuses it as unsafe, as it does a ZIP name holding one.
    private func takeFramed(_ tar: TarStream, yielded: [UInt8], index: Int, findings: inout Findings) -> TarFraming.Entry? {
        if let problem = tar.framing.failure {
            // The framing may have read ahead of this entry: the problem is the archive's.
            findings.record(Violation(.corruptArchive, problem))
            return nil
        }
        guard let framed = tar.nextEntry() else {
            findings.record(Violation(.corruptArchive, "libarchive yields an entry where the tar headers hold none",
                                      entry: yielded, index: index))
            return nil
        }
        guard framed.name == yielded || framed.name.contains(0)
                || ZipDirectory.NameKey(framed.name) == ZipDirectory.NameKey(yielded) else {
            findings.record(Violation(.corruptArchive, "libarchive reads the name as \(EscapedName(yielded).text)",
                                      entry: framed.name, index: index))
            return nil
        }
        return framed
    }

    /// The name the 7z header holds for the entry libarchive yields as the
    /// `index`th, with the `/` libarchive adds to a directory's; nil when it is not
    /// libarchive's name or canonically equivalent to it (libarchive converts the
    /// header's UTF-16 to NFC), after recording why.
    private static func sevenZipName(_ names: [[UInt8]], yielded: [UInt8], index: Int, findings: inout Findings) -> [UInt8]? {
        guard index < names.count else {
            findings.record(Violation(.corruptArchive, "libarchive yields more entries than the 7z header lists", entry: yielded, index: index))
            return nil
        }
        let name = names[index]
        let slash = yielded.last == UInt8(ascii: "/") && name.last != UInt8(ascii: "/")
        let bare = slash ? Array(yielded.dropLast()) : yielded
        guard name == bare || ZipDirectory.NameKey(name) == ZipDirectory.NameKey(bare) else {
            findings.record(Violation(.corruptArchive, "libarchive reads the name as \(EscapedName(yielded).text)", entry: name, index: index))
            return nil
        }
        return slash ? name + [UInt8(ascii: "/")] : name
    }

    /// Compares libarchive's view of an entry with the one `TarFraming` took of
    /// the same header; false when they disagree, after recording why.
    private func crossCheck(_ framed: TarFraming.Entry, kind: ConflictTracker.Kind, entry: OpaquePointer, judge: EntryJudge,
                            findings: inout Findings) -> Bool {
        let agrees: Bool
        switch framed.kind {
        case .unknown:
            findings.record(judge.violation(.unsupportedEntryType, "tar type \(framed.typeFlag) is not accepted"))
            return true
        case .file, .gnuSparse:
            // Old tars mark a directory only by a trailing '/' on an entry of type
            // NUL; libarchive and GNU tar take type '0' the same way, tarfile does not.
            agrees = kind == .file || (kind == .directory && framed.flag == 0 && framed.size == 0 && framed.name.last == 0x2F)
        case .directory: agrees = kind == .directory
        case .hardLink: agrees = archive_entry_hardlink(entry) != nil
        case .symbolicLink, .special: agrees = kind == .other
        case .extensionHeader: agrees = false
        }
        if !agrees {
            findings.record(judge.violation(.corruptArchive, "the tar header says type \(framed.typeFlag), libarchive reads another"))
            return false
        }
        if let logical = framed.logicalSize, archive_entry_size(entry) != logical {
            findings.record(judge.violation(.corruptArchive,
                "the sparse file's size is \(logical) by its header, \(archive_entry_size(entry)) by libarchive"))
            return false
        }
        return true
    }

    private func headerFailure(status: Int32, index: Int) -> Violation {
        let message = ArchiveScan.message(archive, stream: stream)
        if archive_read_has_encrypted_entries(archive) > 0 {
            return Violation(.encryptedEntry, "archive is encrypted: \(message)")
        }
        // libarchive reports "no reader recognised this" as ARCHIVE_ERRNO_FILE_FORMAT, EILSEQ on Linux.
        if index == 0 && stream.tar?.failure == nil && archive_errno(archive) == Errno.illegalByteSequence.rawValue && format?.isOptional != true {
            return Violation(.unsupportedFormat, message)
        }
        let kind = status == ARCHIVE_WARN ? "warning" : (status == ARCHIVE_FATAL ? "fatal error" : "error")
        return Violation(.corruptArchive, "header \(index + 1): libarchive \(kind): \(message)")
    }

    static func typeName(_ entry: OpaquePointer) -> String {
        if archive_entry_hardlink(entry) != nil { return "hard link" }
        if archive_entry_symlink(entry) != nil { return "symbolic link" }
        switch UInt32(archive_entry_filetype(entry)) {
        case 0o120000: return "symbolic link"
        case 0o020000: return "character device"
        case 0o060000: return "block device"
        case 0o010000: return "FIFO"
        case 0o140000: return "socket"
        default: return "unknown-type"
        }
    }
}
