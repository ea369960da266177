import AirlockChild
import AirlockSystem

/// Where a 7z archive ends, from its 32-byte signature header: the next-header
/// offset and size say where the last structure ends. libarchive reads no
/// further, so bytes after that point would be a second, hidden payload that
/// other tools may see (7-Zip lists trailing archives); they are rejected, as
/// bytes after any other format's end are.
package enum SevenZipEnd {
    static let signatureHeaderSize: Int64 = 32

    /// Why the drop does not end where its signature header says, or nil.
    package static func problem(drop: DropFile, dropSize: Int64) throws(SystemError) -> String? {
        var header = [UInt8](repeating: 0, count: Int(signatureHeaderSize))
        let got = try header.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try drop.read(into: raw, at: 0) }
        }.get()
        guard got == header.count else { return "the 7z signature header is truncated" }
        func field(_ offset: Int) -> UInt64 { header[offset..<(offset + 8)].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        let offset = field(12), size = field(20)
        let (sum, overflow) = offset.addingReportingOverflow(size)
        guard !overflow, sum <= UInt64(Int64.max - signatureHeaderSize) else { return "the 7z signature header's offsets overflow" }
        let end = signatureHeaderSize + Int64(sum)
        if end < dropSize { return "\(dropSize - end) bytes follow the end of the 7z archive" }
        if end > dropSize { return "the 7z archive is truncated: it ends at \(end), the drop at \(dropSize)" }
        return nil
    }
}
