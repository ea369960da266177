#if canImport(Glibc)
import Glibc
#endif
import AirlockChild
import AirlockFormats
import AirlockPolicy
import AirlockSystem
import AirlockText
import CArchive
import CLzma

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
    /// Decodes tar names that are not UTF-8, when the operator names an encoding.
    var legacyNames: LegacyNames?
    /// The format being read, for the few rules that depend on it (OptionalFormats.swift).
    var format: ArchiveFormat?
    /// A RAR's own listing, which each yielded entry and its data's CRC32 must match.
    var rarEntries: [RarListing.Entry]?
    /// The CRC32 of the current entry's data so far, kept for a RAR.
    var dataCRC: UInt32 = 0
    private var tracker = ConflictTracker()
    private var counted: Int64 = 0
    /// True once libarchive has reported the archive's end, and not an error.
    private(set) var reachedEnd = false

    private static let zeros = [UInt8](repeating: 0, count: 64 * 1024)

    init(archive: OpaquePointer, policy: Policy, blockSize: Int64, stream: StreamPosition) {
        self.archive = archive
        self.stream = stream
        self.policy = policy
        self.blockSize = blockSize
    }

    private enum DataEnd { case complete, skipRest, stop }

    mutating func readEntries<Sink: EntrySink>(into sink: inout Sink, expected: inout [ZipDirectory.NameKey: ZipDirectory.Entry]?,
                                               outcome: inout ScanOutcome) {
        var index = 0
        while true {
            var entryPointer: OpaquePointer?
            let status = archive_read_next_header(archive, &entryPointer)
            if status == ARCHIVE_EOF {
                reachedEnd = true
                if let tar = stream.tar, let unsupported = tar.framing.unsupported {
                    outcome.findings.record(Violation(.unsupportedEntryType, "tar type \(unsupported.typeFlag) is not accepted",
                                                      entry: unsupported.name))
                }
                return
            }
            guard status == ARCHIVE_OK, let entry = entryPointer else {
                outcome.findings.record(headerFailure(status: status, index: index))
                return
            }
            guard policy.admitsEntries(index + 1) else {
                outcome.findings.record(Violation(.tooManyEntries, "more than \(policy.maxEntries) entries"))
                return
            }
            let yielded: [UInt8] = archive_entry_pathname(entry).map { Array(UnsafeBufferPointer(start: $0, count: strlen($0))).map { UInt8(bitPattern: $0) } } ?? []
            if isImageRoot(yielded, entry) { continue }
            var listed: ZipDirectory.Entry?
            if expected != nil {
                guard let found = expected!.removeValue(forKey: ZipDirectory.NameKey(yielded)) else {
                    outcome.findings.record(Violation(.corruptArchive, "entry is not in the central directory, or appears twice",
                                                      entry: yielded, index: index))
                    return
                }
                listed = found
            }
            var framed: TarFraming.Entry?
            if let tar = stream.tar {
                guard let entry = takeFramed(tar, yielded: yielded, index: index, findings: &outcome.findings) else { return }
                framed = entry
            }
            var headerName: [UInt8]?
            if let names = sevenZipNames {
                guard let name = EntryScan.sevenZipName(names, yielded: yielded, index: index, findings: &outcome.findings) else { return }
                headerName = name
            }
            // An entry lands under the name its archive holds: a ZIP's as its
            // directory holds it, decoded as its ZipName says; a tar's as its headers
            // spell it, decoded if it is not UTF-8; a 7z's as its header holds it.
            var raw = listed?.landingName ?? framed?.name ?? headerName ?? yielded
            var extractionRoot = false
            if framed != nil {
                switch TarEntryNames.relative(raw) {
                case .extractionRoot: extractionRoot = true
                case .name(let relative): raw = relative
                }
            }
            var judge = EntryJudge(policy: policy, raw: raw, index: index)
            if let listed, let encoding = listed.legacyEncoding { judge.stored = (listed.name, encoding) }
            if framed != nil { judgeTarName(raw, judge: &judge, findings: &outcome.findings) }
            index += 1
            outcome.entries = index

            let fileType = UInt32(archive_entry_filetype(entry))
            let kind: ConflictTracker.Kind
            if archive_entry_hardlink(entry) != nil || archive_entry_symlink(entry) != nil {
                kind = .other
            } else if fileType == 0o100000 {
                kind = .file
            } else if fileType == 0o040000 {
                kind = .directory
            } else {
                kind = .other
            }
            if let framed, !crossCheck(framed, kind: kind, entry: entry, judge: judge, findings: &outcome.findings) { return }
            // A tar's `./` directory is where it extracts: counted, nothing to judge or make.
            if extractionRoot && kind == .directory { continue }
            let path = judge.validate(kind: kind, findings: &outcome.findings)
            if let path { judge.checkConflicts(path, kind: kind, tracker: &tracker, findings: &outcome.findings) }
            if kind == .other {
                outcome.findings.record(judge.violation(.unsupportedEntryType, "\(EntryScan.typeName(entry)) entries are not accepted"))
            }
            if archive_entry_is_encrypted(entry) != 0 {
                outcome.findings.record(judge.violation(.encryptedEntry, "entry is encrypted"))
            }
            var declared: Int64? = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
            let sparse = archive_entry_sparse_count(entry) > 0
            var compressed: Int64? = nil
            if let listed {
                compressed = listed.compressedSize
                if kind == .file {
                    if let size = declared, size != listed.uncompressedSize {
                        outcome.findings.record(judge.violation(.corruptArchive, "local and central sizes disagree"))
                        return
                    }
                    declared = listed.uncompressedSize
                }
            }
            if kind == .file, let size = declared, size > policy.maxFileBytes {
                outcome.findings.record(judge.violation(.fileTooLarge, "declares \(size) bytes, over the \(policy.maxFileBytes)-byte limit"))
            }

            let writing = outcome.findings.isClean && outcome.systemError == nil
            switch kind {
            case .directory:
                if writing, let path {
                    do { try sink.makeDirectory(path); outcome.directories += 1 } catch { outcome.systemError = error; return }
                }
            case .file:
                if writing, let path {
                    do { try sink.beginFile(path) } catch { outcome.systemError = error; return }
                }
                let end = readData(judge: judge, declared: declared, compressed: compressed, sparse: sparse, writing: writing,
                                   sink: &sink, outcome: &outcome)
                if end == .complete, let problem = rarDataProblem(index - 1) { outcome.findings.record(judge.violation(.corruptArchive, problem)) }
                if writing, path != nil {
                    do { try sink.endFile() } catch { outcome.systemError = error; return }
                    if outcome.findings.isClean { outcome.files += 1 }
                }
                if end == .stop { return }
            case .other:
                break
            }
        }
    }

    /// Reads one entry's data to its end, so the format's checksum is verified,
    /// counting every chunk against the file and total allowances.
    private mutating func readData<Sink: EntrySink>(judge: EntryJudge, declared: Int64?, compressed: Int64?, sparse: Bool,
                                                    writing: Bool, sink: inout Sink, outcome: inout ScanOutcome) -> DataEnd {
        var entryBytes: Int64 = 0
        let rawStart = stream.consumed
        dataCRC = 0
        var writing = writing

        func feed(_ chunk: UnsafeRawBufferPointer, _ this: inout EntryScan) -> DataEnd {
            let n = Int64(chunk.count)
            // Each comparison subtracts from a limit the count has not passed: no sum can overflow.
            if n > this.policy.maxFileBytes - entryBytes {
                outcome.findings.record(judge.violation(.fileTooLarge, "more than \(this.policy.maxFileBytes) bytes written"))
                return .skipRest
            }
            if let declared, n > declared - entryBytes {
                outcome.findings.record(judge.violation(.corruptArchive, "holds more data than its header declares (\(declared) bytes)"))
                return .skipRest
            }
            if n > this.policy.maxTotalBytes - this.counted {
                outcome.findings.record(Violation(.totalTooLarge, "more than \(this.policy.maxTotalBytes) bytes in all"))
                return .stop
            }
            if let compressed, this.policy.breaksRatio(size: entryBytes + n, compressed: compressed) {
                outcome.findings.record(judge.violation(.ratioTooHigh, "expands past \(this.policy.maxRatio)x its \(compressed) compressed bytes"))
                return .skipRest
            }
            writing = writing && outcome.findings.isClean
            if writing {
                do { try sink.write(chunk) } catch {
                    outcome.systemError = error
                    return .stop
                }
                outcome.bytesWritten += n
            }
            entryBytes += n
            if this.rarEntries != nil { this.dataCRC = lzma_crc32(chunk.bindMemory(to: UInt8.self).baseAddress, chunk.count, this.dataCRC) }
            this.counted += n
            return .complete
        }

        while true {
            var block: UnsafeRawPointer?
            var size = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(archive, &block, &size, &offset)
            if status == ARCHIVE_EOF { break }
            guard status == ARCHIVE_OK else {
                // ARCHIVE_WARN included: a bad CRC or a size mismatch comes back as a warning.
                if archive_read_has_encrypted_entries(archive) > 0 {
                    outcome.findings.record(judge.violation(.encryptedEntry, "entry is encrypted: \(ArchiveScan.message(archive))"))
                } else {
                    outcome.findings.record(judge.violation(.corruptArchive, dataFailure(status)))
                }
                return .stop
            }
            if offset < entryBytes {
                outcome.findings.record(judge.violation(.corruptArchive, "data blocks overlap"))
                return .stop
            }
            // A sparse entry's holes are written as zeros and count like data: the
            // quotas judge the file as it lands, not as the archive stores it.
            while offset > entryBytes {
                let gap = Int(min(offset - entryBytes, Int64(EntryScan.zeros.count)))
                let end = EntryScan.zeros.withUnsafeBytes { feed(UnsafeRawBufferPointer(rebasing: $0[0..<gap]), &self) }
                if end != .complete { return end }
            }
            if size > 0 {
                let end = feed(UnsafeRawBufferPointer(start: block, count: size), &self)
                if end != .complete { return end }
            }
            reporter?.report(stream.consumed)
        }
        // A sparse file may end in a hole, which no data block reports: its
        // declared size is where it ends, as bsdtar and GNU tar extract it.
        while sparse, let declared, declared > entryBytes {
            let gap = Int(min(declared - entryBytes, Int64(EntryScan.zeros.count)))
            let end = EntryScan.zeros.withUnsafeBytes { feed(UnsafeRawBufferPointer(rebasing: $0[0..<gap]), &self) }
            if end != .complete { return end }
        }
        if let declared, entryBytes != declared {
            outcome.findings.record(judge.violation(.corruptArchive, "holds \(entryBytes) bytes, its header declares \(declared)"))
            return .skipRest
        }
        if compressed == nil {
            // A stream does not say how many compressed bytes an entry took: take what
            // the reader consumed meanwhile plus one block of read-ahead, an upper bound.
            let consumed = stream.consumed - rawStart + blockSize
            if policy.breaksRatio(size: entryBytes, compressed: consumed) {
                outcome.findings.record(judge.violation(.ratioTooHigh, "\(entryBytes) bytes from at most \(consumed) compressed"))
            }
        }
        return .complete
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
        if index == 0 && stream.tar?.failure == nil && archive_errno(archive) == EILSEQ && format?.isOptional != true {
            return Violation(.unsupportedFormat, message)
        }
        let kind = status == ARCHIVE_WARN ? "warning" : (status == ARCHIVE_FATAL ? "fatal error" : "error")
        return Violation(.corruptArchive, "header \(index + 1): libarchive \(kind): \(message)")
    }

    private func dataFailure(_ status: Int32) -> String {
        let kind = status == ARCHIVE_WARN ? "warning" : (status == ARCHIVE_FATAL ? "fatal error" : "error")
        return "libarchive \(kind) reading data: \(ArchiveScan.message(archive, stream: stream))"
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
