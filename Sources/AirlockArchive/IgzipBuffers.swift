import CIsal

/// What one of ISA-L's igzip inflaters works with: its state, a block of
/// compressed input read from the drop, and the output window its decoded bytes
/// go into. Owned here so that every inflater allocates and frees them alike.
final class IgzipBuffers {
    let state: UnsafeMutablePointer<inflate_state>
    let input: UnsafeMutableRawBufferPointer
    let output: UnsafeMutableRawBufferPointer

    /// The output window: large enough that each call to igzip does real work,
    /// small enough to stay in cache and keep the decoder's memory flat.
    static let outputBytes = 128 * 1024

    /// State and buffers for input blocks of `blockSize` bytes; the state is
    /// initialised with `crcFlag` (ISAL_GZIP for gzip members, ISAL_GZIP_NO_HDR for
    /// raw deflate with a CRC-32 of its output).
    init(blockSize: Int, crcFlag: Int32) {
        state = .allocate(capacity: 1)
        input = .allocate(byteCount: blockSize, alignment: 64)
        output = .allocate(byteCount: Self.outputBytes, alignment: 64)
        reset(crcFlag: crcFlag)
    }

    deinit {
        state.deallocate()
        input.deallocate()
        output.deallocate()
    }

    /// Starts a fresh stream: a new entry, or the next gzip member.
    func reset(crcFlag: Int32) {
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(crcFlag)
    }
}
