import CZlib

/// A deflate stream inflated incrementally by zlib, for the content classifier:
/// it is fed compressed bytes as they arrive and hands on what they inflate to,
/// never more than its budget in all. One per stream being read.
final class Inflater {
    enum State: Equatable {
        /// Wants more input.
        case more
        /// The stream ended (Z_STREAM_END): what follows is not part of it.
        case ended
        /// Damaged data; nothing more comes out of it.
        case failed
        /// The budget was spent before the stream ended.
        case overBudget
    }

    private var stream = z_stream()
    private var output = [UInt8](repeating: 0, count: 16 * 1024)
    private(set) var state = State.more
    /// How many more inflated bytes may be handed on.
    private(set) var budget: Int

    /// inflateInit2(3): `raw` for a ZIP entry's bare deflate data, otherwise the
    /// zlib wrapper a PDF's FlateDecode uses. A stream zlib cannot start is failed at once.
    init(raw: Bool, budget: Int) {
        self.budget = budget
        let bits: Int32 = raw ? -15 : 15
        if inflateInit2_(&stream, bits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) != Z_OK { state = .failed }
    }

    deinit { inflateEnd(&stream) }

    /// inflate(3) of `input`; `sink` gets each piece of output. Returns how many
    /// input bytes were consumed (all of them unless the stream ended or failed).
    @discardableResult
    func feed(_ input: UnsafeRawBufferPointer, _ sink: (UnsafeRawBufferPointer) -> Void) -> Int {
        guard state == .more, let base = input.baseAddress, !input.isEmpty else { return 0 }
        stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        defer { stream.next_in = nil }
        while state == .more {
            let status: Int32 = output.withUnsafeMutableBytes { room in
                stream.next_out = room.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(room.count)
                let status = inflate(&stream, Z_NO_FLUSH)
                let produced = room.count - Int(stream.avail_out)
                let handed = min(produced, budget)
                if handed > 0 { sink(UnsafeRawBufferPointer(rebasing: room[..<handed])) }
                budget -= handed
                if produced > handed { state = .overBudget }
                stream.next_out = nil
                return status
            }
            if state != .more { break }
            switch status {
            case Z_STREAM_END: state = .ended
            case Z_OK: if stream.avail_in == 0 && stream.avail_out != 0 { return input.count }
            case Z_BUF_ERROR: return input.count - Int(stream.avail_in)
            default: state = .failed
            }
        }
        return input.count - Int(stream.avail_in)
    }
}
