import AirlockFraming
import AirlockSystem
import AirlockText
import CArchive

/// The decompressed bytes of a tar drop on their way to libarchive's tar
/// reader, shown first to airlock's own `TarFraming`: two readers of the same
/// bytes, whose views of every entry's type and of the archive's end are
/// compared.
///
/// libarchive's tar reader stops at the first end-of-archive block; `finish()`
/// then reads the rest of the stream, which must be zero padding, so that the
/// decompressor reaches its trailer (and checks it) and nothing hides behind
/// the end marker.
final class TarStream {
    private let decoder: StreamDecoder
    private(set) var framing = TarFraming()
    private var trailing: Int64 = 0
    /// Why the stream failed: the decoder's reason, or too much padding.
    private(set) var failure: String?

    /// Zero padding allowed after the end-of-archive block: tar fills its last
    /// record (10 KiB by default, larger with a blocking factor) and no more.
    static let maxPadding: Int64 = 1 << 20

    init(decoder: StreamDecoder) {
        self.decoder = decoder
    }

    /// Raw bytes of the drop consumed so far.
    var consumed: Int64 { decoder.consumed }

    /// The read of the drop that failed, if one did.
    var readError: SystemError? { decoder.readError }

    /// The next entry's header as the framing saw it.
    func nextEntry() -> TarFraming.Entry? { framing.next() }

    /// The next block for libarchive: its length, 0 at the end, -1 on failure.
    private func read(_ block: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        guard let bytes = pull() else { return -1 }
        block.pointee = bytes.baseAddress
        return bytes.count
    }

    /// Passes the next decoded bytes through the framing.
    private func pull() -> UnsafeRawBufferPointer? {
        guard failure == nil else { return nil }
        guard let bytes = decoder.next() else {
            failure = decoder.failure ?? "the stream failed"
            return nil
        }
        if framing.ended { trailing += Int64(bytes.count) }
        // A framing failure does not stop libarchive here: its own verdict on the
        // same bytes (not a tar at all, say) comes first, and the disagreement is
        // reported at the next entry or at the end.
        framing.consume(bytes)
        if bytes.isEmpty { framing.finish() }
        if trailing > TarStream.maxPadding {
            failure = "more than \(TarStream.maxPadding) bytes follow the end-of-archive marker"
            return nil
        }
        return bytes
    }

    /// After libarchive's tar reader has ended: reads the stream to its end.
    /// Returns why the stream, or what followed the archive, is not acceptable.
    func finish() -> String? {
        while let bytes = pull() {
            if bytes.isEmpty { break }
        }
        if let problem = failure ?? framing.failure { return problem }
        if let left = framing.next() {
            return "the tar headers hold an entry libarchive does not yield (type \(left.typeFlag), \(EscapedName(left.name).text))"
        }
        return nil
    }

    /// Opens `archive` on this stream.
    func attach(to archive: OpaquePointer) -> Int32 {
        let context = Unmanaged.passUnretained(self).toOpaque()
        return archive_read_open(archive, context, nil, { _, context, block in
            let stream = Unmanaged<TarStream>.fromOpaque(context!).takeUnretainedValue()
            return la_ssize_t(stream.read(block!))
        }, nil)
    }
}
