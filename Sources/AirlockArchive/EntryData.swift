import AirlockChild
import AirlockPolicy
import CArchive
import CLzma

/// Reading one entry's data: every chunk counted against the file, total and
/// ratio allowances before it is written.
extension EntryScan {
    enum DataEnd { case complete, skipRest, stop }

    private static let zeros = [UInt8](repeating: 0, count: 64 * 1024)

    /// One entry's data as it is read: what it is judged by and how far it got.
    struct EntryData {
        let judge: EntryJudge
        let sizes: EntrySizes
        /// Whether chunks still go to the sink: false once a finding is recorded.
        var writing: Bool
        /// Bytes of the entry so far, holes included.
        var bytes: Int64 = 0
    }

    /// Reads one entry's data to its end, so the format's checksum is verified,
    /// counting every chunk against the file and total allowances.
    mutating func readData<Sink: EntrySink>(judge: EntryJudge, sizes: EntrySizes, writing: Bool, sink: inout Sink,
                                            outcome: inout ScanOutcome) -> DataEnd {
        var data = EntryData(judge: judge, sizes: sizes, writing: writing)
        let rawStart = stream.read
        dataCRC = 0
        let end: DataEnd
        if let deflate = sizes.deflate, let inflater {
            end = readDeflated(deflate, inflater: inflater, &data, sink: &sink, outcome: &outcome)
        } else {
            end = readBlocks(&data, sink: &sink, outcome: &outcome)
        }
        guard end == .complete else { return end }
        // A sparse file may end in a hole, which no data block reports: its
        // declared size is where it ends, as bsdtar and GNU tar extract it.
        if sizes.sparse, let declared = sizes.declared {
            let end = feedZeros(upTo: declared, &data, sink: &sink, outcome: &outcome)
            if end != .complete { return end }
        }
        if let declared = sizes.declared, data.bytes != declared {
            outcome.findings.record(judge.violation(.corruptArchive, "holds \(data.bytes) bytes, its header declares \(declared)"))
            return .skipRest
        }
        if sizes.compressed == nil {
            // A stream does not say how many compressed bytes an entry took: take what
            // the reader read of the drop meanwhile plus one block of read-ahead, an
            // upper bound (never the position's movement, which a seek makes negative).
            let consumed = stream.read - rawStart + blockSize
            if policy.breaksRatio(size: data.bytes, compressed: consumed) {
                outcome.findings.record(judge.violation(.ratioTooHigh, "\(data.bytes) bytes from at most \(consumed) compressed"))
            }
        }
        return .complete
    }

    /// Feeds libarchive's data blocks, and the holes between them, until the entry's end.
    private mutating func readBlocks<Sink: EntrySink>(_ data: inout EntryData, sink: inout Sink, outcome: inout ScanOutcome) -> DataEnd {
        while true {
            var block: UnsafeRawPointer?
            var size = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(archive, &block, &size, &offset)
            if status == ARCHIVE_EOF { return .complete }
            guard status == ARCHIVE_OK else {
                // ARCHIVE_WARN included: a bad CRC or a size mismatch comes back as a warning.
                if archive_read_has_encrypted_entries(archive) > 0 {
                    outcome.findings.record(data.judge.violation(.encryptedEntry, "entry is encrypted: \(ArchiveScan.message(archive))"))
                } else {
                    outcome.findings.record(data.judge.violation(.corruptArchive, dataFailure(status)))
                }
                return .stop
            }
            if offset < data.bytes {
                outcome.findings.record(data.judge.violation(.corruptArchive, "data blocks overlap"))
                return .stop
            }
            // A sparse entry's holes are written as zeros and count like data: the
            // quotas judge the file as it lands, not as the archive stores it.
            let end = feedZeros(upTo: offset, &data, sink: &sink, outcome: &outcome)
            if end != .complete { return end }
            if size > 0 {
                let end = feed(UnsafeRawBufferPointer(start: block, count: size), &data, sink: &sink, outcome: &outcome)
                if end != .complete { return end }
            }
            reporter?.report(stream.consumed)
        }
    }

    /// Feeds zeros until the entry holds `offset` bytes.
    private mutating func feedZeros<Sink: EntrySink>(upTo offset: Int64, _ data: inout EntryData, sink: inout Sink,
                                                     outcome: inout ScanOutcome) -> DataEnd {
        while offset > data.bytes {
            let gap = Int(min(offset - data.bytes, Int64(EntryScan.zeros.count)))
            let end = EntryScan.zeros.withUnsafeBytes { feed(UnsafeRawBufferPointer(rebasing: $0[0..<gap]), &data, sink: &sink, outcome: &outcome) }
            if end != .complete { return end }
        }
        return .complete
    }

    /// Counts one chunk against the allowances and writes it while the findings are clean.
    mutating func feed<Sink: EntrySink>(_ chunk: UnsafeRawBufferPointer, _ data: inout EntryData, sink: inout Sink,
                                        outcome: inout ScanOutcome) -> DataEnd {
        let n = Int64(chunk.count)
        let judge = data.judge
        let declared = data.sizes.declared, compressed = data.sizes.compressed
        switch allowance.admit(n, after: data.bytes, declared: declared, compressed: compressed) {
        case nil:
            break
        case .fileTooLarge:
            outcome.findings.record(judge.violation(.fileTooLarge, "more than \(policy.maxFileBytes) bytes written"))
            return .skipRest
        case .pastDeclaredSize:
            outcome.findings.record(judge.violation(.corruptArchive, "holds more data than its header declares (\(declared ?? 0) bytes)"))
            return .skipRest
        case .totalTooLarge:
            outcome.findings.record(Violation(.totalTooLarge, "more than \(policy.maxTotalBytes) bytes in all"))
            return .stop
        case .ratioTooHigh:
            outcome.findings.record(judge.violation(.ratioTooHigh, "expands past \(policy.maxRatio)x its \(compressed ?? 0) compressed bytes"))
            return .skipRest
        }
        data.writing = data.writing && outcome.findings.isClean
        if data.writing {
            do { try sink.write(chunk) } catch {
                outcome.systemError = error
                return .stop
            }
            outcome.bytesWritten += n
        }
        data.bytes += n
        if rarEntries != nil { dataCRC = lzma_crc32(chunk.bindMemory(to: UInt8.self).baseAddress, chunk.count, dataCRC) }
        return .complete
    }

    private func dataFailure(_ status: Int32) -> String {
        let kind = status == ARCHIVE_WARN ? "warning" : (status == ARCHIVE_FATAL ? "fatal error" : "error")
        return "libarchive \(kind) reading data: \(ArchiveScan.message(archive, stream: stream))"
    }
}
