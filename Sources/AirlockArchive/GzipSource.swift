import AirlockChild
import AirlockSystem
import CIsal

/// The decompressed bytes of a gzip drop, fed to libarchive's tar reader in
/// place of libarchive's own gzip filter, which skips the trailer's CRC-32 and
/// length (archive_read_support_filter_gzip.c: "XXX TODO: Verify the length and
/// CRC-32 fields"). ISA-L's igzip, in gzip mode, parses each member's header and
/// checks its trailer; concatenated members are accepted, anything else after
/// the last is not. It is one of the `StreamDecoder`s a `TarStream` reads.
final class GzipSource {
    private let file: DropFile
    private let buffers: IgzipBuffers
    private var state: UnsafeMutablePointer<inflate_state> { buffers.state }
    private var input: UnsafeMutableRawBufferPointer { buffers.input }
    private var output: UnsafeMutableRawBufferPointer { buffers.output }
    private var inputEnded = false
    private var memberEnded = false
    /// Raw bytes read from the drop so far.
    private(set) var consumed: Int64 = 0
    /// Why the stream failed, for the rejection's detail.
    private(set) var failure: String?
    /// The read of the drop that failed, if one did: not a verdict on the bytes.
    private(set) var readError: SystemError?

    init(file: DropFile, blockSize: Int) {
        self.file = file
        buffers = IgzipBuffers(blockSize: blockSize, crcFlag: ISAL_GZIP)
    }

    /// The next decompressed block: its length, 0 at the end, -1 on failure.
    func read(_ block: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        guard failure == nil else { return -1 }
        while true {
            if state.pointee.avail_in == 0 && !inputEnded {
                let n: Int
                do {
                    n = try file.read(into: input)
                } catch {
                    readError = error
                    failure = "reading the drop: \(error)"
                    return -1
                }
                if n == 0 {
                    inputEnded = true
                } else {
                    consumed += Int64(n)
                    state.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    state.pointee.avail_in = UInt32(n)
                }
            }
            if memberEnded {
                if state.pointee.avail_in == 0 {
                    if inputEnded { return 0 }
                    continue
                }
                // More bytes after a complete member: they must be another member.
                let next = state.pointee.next_in, left = state.pointee.avail_in
                isal_inflate_reset(state)
                state.pointee.crc_flag = UInt32(ISAL_GZIP)
                state.pointee.next_in = next
                state.pointee.avail_in = left
                memberEnded = false
            }
            state.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            state.pointee.avail_out = UInt32(output.count)
            let status = isal_inflate(state)
            guard status == ISAL_DECOMP_OK || status == ISAL_END_INPUT else {
                failure = "gzip data is corrupt: " + GzipSource.describe(status)
                return -1
            }
            if state.pointee.block_state == ISAL_BLOCK_FINISH { memberEnded = true }
            let produced = output.count - Int(state.pointee.avail_out)
            if produced > 0 {
                block.pointee = UnsafeRawPointer(output.baseAddress!)
                return produced
            }
            // igzip keeps decoded bytes back when the output is full: only a call
            // that had every byte of the drop and gave nothing shows it is cut short.
            if !memberEnded && state.pointee.avail_in == 0 && inputEnded {
                failure = "the gzip stream is truncated"
                return -1
            }
        }
    }

    static func describe(_ status: Int32) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: return "invalid deflate block"
        case ISAL_INVALID_SYMBOL: return "invalid deflate symbol"
        case ISAL_INVALID_LOOKBACK: return "invalid distance too far back"
        case ISAL_INVALID_WRAPPER: return "not a gzip member (bad header, or trailing garbage)"
        case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method"
        case ISAL_INCORRECT_CHECKSUM: return "incorrect data check (CRC-32 or length)"
        default: return "igzip error \(status)"
        }
    }
}
