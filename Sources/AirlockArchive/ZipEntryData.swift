import AirlockChild
import AirlockPolicy
import AirlockZip

/// A ZIP entry's deflate data, inflated by the scan's own `ZipInflater` rather
/// than by libarchive, which then only walks the headers (its seekable reader
/// finds each local header from the directory, whatever was read of the data
/// before it). Every chunk is counted against the allowances as libarchive's
/// would be, and the CRC-32 is compared with the directory's, which the local
/// header or data descriptor was found to agree with.
extension EntryScan {
    /// Where a deflate entry's data lies in the drop, and the CRC-32 it must inflate to.
    struct DeflateData {
        let offset: Int64
        let compressedSize: Int64
        let crc: UInt32

        /// The deflate data of `listed`, if the scan inflates it itself: a file
        /// compressed with method 8 (deflate) and not encrypted.
        init?(_ listed: ZipDirectory.Entry?) {
            guard let listed, listed.method == 8, !listed.isEncrypted else { return nil }
            offset = listed.dataOffset
            compressedSize = listed.compressedSize
            crc = listed.crc
        }
    }

    /// Inflates one entry's data to its end, so its CRC-32 is checked, feeding
    /// every chunk through the allowances.
    mutating func readDeflated<Sink: EntrySink>(_ deflate: DeflateData, inflater: ZipInflater, _ data: inout EntryData,
                                                sink: inout Sink, outcome: inout ScanOutcome) -> DataEnd {
        inflater.start(at: deflate.offset, compressedSize: deflate.compressedSize)
        while true {
            guard let chunk = inflater.next() else {
                if let error = inflater.readError {
                    outcome.systemError = error
                    outcome.failedWhile = .readingDrop
                } else {
                    outcome.findings.record(data.judge.violation(.corruptArchive, inflater.failure ?? "the deflate stream failed"))
                }
                return .stop
            }
            if chunk.isEmpty { break }
            let end = feed(chunk, &data, sink: &sink, outcome: &outcome)
            if end != .complete { return end }
            reporter?.report(deflate.offset + inflater.consumed)
        }
        guard inflater.crc == deflate.crc else {
            outcome.findings.record(data.judge.violation(.corruptArchive,
                "CRC-32 mismatch: the data's is \(hex(inflater.crc)), the central directory says \(hex(deflate.crc))"))
            return .stop
        }
        return .complete
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
