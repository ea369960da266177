import AirlockChild
import AirlockSystem
import CIsal

/// A ZIP entry's deflate data, inflated by ISA-L's igzip straight from where the
/// central directory says it lies, with the CRC-32 of what comes out.
///
/// libarchive's ZIP reader inflates through zlib, about half igzip's speed; the
/// directory, already read and checked against every local record, says where
/// each entry's compressed bytes start and how many there are, so the scan reads
/// them itself and libarchive's reader only walks the headers. The deflate
/// stream must end exactly where the compressed size says: bytes left over after
/// its last block are bytes a reader could take for something else, and a stream
/// that runs past them is truncated. One inflater serves every entry in turn.
///
/// Its input is read a block at a time, ahead past the entry's end: a small
/// entry's data is then mostly already there, read with the entries before it
/// (one pread per 64 KiB, not one per entry). igzip is handed only the entry's
/// own bytes, so a stream can no more run past its compressed size than before.
final class ZipInflater {
    private let file: DropFile
    private let dropSize: Int64
    private let buffers: IgzipBuffers
    private var state: UnsafeMutablePointer<inflate_state> { buffers.state }
    private var input: UnsafeMutableRawBufferPointer { buffers.input }
    private var output: UnsafeMutableRawBufferPointer { buffers.output }
    /// The next compressed byte to read from the drop, and how many are left.
    private var position: Int64 = 0
    private var remaining: Int64 = 0
    private var finished = false
    /// Compressed bytes of the current entry read from the drop so far.
    private(set) var consumed: Int64 = 0
    /// Why the entry's stream failed, for the rejection's detail.
    private(set) var failure: String?
    /// The read of the drop that failed, if one did: not a verdict on the bytes.
    private(set) var readError: SystemError?
    /// Where the input buffer's bytes lie in the drop, and how many there are.
    private var bufferOffset: Int64 = 0
    private var bufferCount = 0

    init(file: DropFile, dropSize: Int64, blockSize: Int) {
        self.file = file
        self.dropSize = dropSize
        buffers = IgzipBuffers(blockSize: blockSize, crcFlag: ISAL_GZIP_NO_HDR)
    }

    /// Starts on an entry whose `compressedSize` bytes of raw deflate begin at `offset`.
    func start(at offset: Int64, compressedSize: Int64) {
        // Raw deflate, with the gzip CRC-32 of the output kept in state.crc.
        buffers.reset(crcFlag: ISAL_GZIP_NO_HDR)
        position = offset
        remaining = compressedSize
        consumed = 0
        finished = false
        failure = nil
    }

    /// The CRC-32 of everything inflated so far.
    var crc: UInt32 { state.pointee.crc }

    /// The next inflated bytes, valid until the next call; empty once the stream
    /// has ended where its compressed size says; nil on failure, with `failure`
    /// (or `readError`) saying why.
    func next() -> UnsafeRawBufferPointer? {
        guard failure == nil else { return nil }
        while !finished {
            if state.pointee.avail_in == 0 && remaining > 0 {
                guard refill() else { return nil }
            }
            state.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            state.pointee.avail_out = UInt32(output.count)
            let status = isal_inflate(state)
            guard status == ISAL_DECOMP_OK || status == ISAL_END_INPUT else {
                failure = "deflate data is corrupt: " + GzipSource.describe(status)
                return nil
            }
            if state.pointee.block_state == ISAL_BLOCK_FINISH {
                finished = true
                guard unused == 0 else {
                    failure = "\(unused) bytes of its compressed size follow the end of the deflate stream"
                    return nil
                }
            }
            let produced = output.count - Int(state.pointee.avail_out)
            if produced > 0 { return UnsafeRawBufferPointer(start: output.baseAddress, count: produced) }
            // igzip keeps decoded bytes back when the output is full: only a call
            // that had every input byte and gave nothing shows the stream is cut short.
            if !finished && state.pointee.avail_in == 0 && remaining == 0 {
                failure = "the deflate stream is truncated: its compressed size ends before its last block does"
                return nil
            }
        }
        return UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// Compressed bytes the finished stream did not use: those not yet handed to
    /// igzip, those it was handed and left, and whole bytes still in its bit
    /// buffer or its header buffer (a raw stream's end gives none of them back).
    private var unused: Int64 {
        remaining + Int64(state.pointee.avail_in) + Int64(state.pointee.read_in_length / 8) + Int64(state.pointee.tmp_in_size)
    }

    /// Hands igzip the entry's next compressed bytes, from the input buffer when
    /// they were read ahead, else from a new block read at `position`; false
    /// after a failed read.
    private func refill() -> Bool {
        if position < bufferOffset || position >= bufferOffset + Int64(bufferCount) {
            let wanted = Int(min(Int64(input.count), dropSize - position))
            let n: Int
            do {
                n = wanted > 0 ? try file.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<wanted]), at: position) : 0
            } catch {
                readError = error
                failure = "reading the drop: \(error)"
                return false
            }
            guard n == wanted, n > 0 else {
                // The directory was checked against the drop's size: it shrank since.
                failure = "the drop ended inside an entry's data"
                return false
            }
            bufferOffset = position
            bufferCount = n
        }
        let start = Int(position - bufferOffset)
        let n = Int(min(Int64(bufferCount - start), remaining))
        position += Int64(n)
        remaining -= Int64(n)
        consumed += Int64(n)
        state.pointee.next_in = (input.baseAddress! + start).assumingMemoryBound(to: UInt8.self)
        state.pointee.avail_in = UInt32(n)
        return true
    }
}
