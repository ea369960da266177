import AirlockSystem
import CArchive
import CZlib
#if canImport(Glibc)
import Glibc
#endif

/// The decompressed bytes of a gzip drop, fed to libarchive's tar reader in
/// place of libarchive's own gzip filter, which skips the trailer's CRC-32 and
/// length (archive_read_support_filter_gzip.c: "XXX TODO: Verify the length and
/// CRC-32 fields"). zlib in gzip mode checks both at the end of every member;
/// concatenated members are accepted, anything else after the last is not.
final class GzipSource {
    private let file: FileDescriptor
    private var stream = z_stream()
    private var input: UnsafeMutableRawBufferPointer
    private var output: UnsafeMutableRawBufferPointer
    private var inputEnded = false
    private var memberEnded = false
    private var initialised = false
    /// Raw bytes read from the drop so far.
    private(set) var consumed: Int64 = 0
    /// Why the stream failed, for the rejection's detail.
    private(set) var failure: String?

    init(file: FileDescriptor, blockSize: Int) {
        self.file = file
        input = .allocate(byteCount: blockSize, alignment: 16)
        output = .allocate(byteCount: 64 * 1024, alignment: 16)
        // 16 + 15: gzip wrapper, 32 KiB window.
        initialised = inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        if !initialised { failure = "zlib could not start" }
    }

    deinit {
        if initialised { inflateEnd(&stream) }
        input.deallocate()
        output.deallocate()
    }

    /// The next decompressed block: its length, 0 at the end, -1 on failure.
    func read(_ block: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        guard initialised, failure == nil else { return -1 }
        while true {
            if stream.avail_in == 0 && !inputEnded {
                let n: Int
                do {
                    n = try file.read(into: input)
                } catch {
                    failure = "reading the drop: \(error)"
                    return -1
                }
                if n == 0 {
                    inputEnded = true
                } else {
                    consumed += Int64(n)
                    stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.avail_in = uInt(n)
                }
            }
            if stream.avail_in == 0 && inputEnded {
                if memberEnded { return 0 }
                failure = "the gzip stream is truncated"
                return -1
            }
            if memberEnded {
                // More bytes after a complete member: they must be another member.
                guard inflateReset(&stream) == Z_OK else { failure = "zlib reset failed"; return -1 }
                memberEnded = false
            }
            stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(output.count)
            let status = inflate(&stream, Z_NO_FLUSH)
            let produced = output.count - Int(stream.avail_out)
            switch status {
            case Z_STREAM_END:
                memberEnded = true
            case Z_OK, Z_BUF_ERROR:
                break
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                failure = "gzip data is corrupt: \(message)"
                return -1
            }
            if produced > 0 {
                block.pointee = UnsafeRawPointer(output.baseAddress!)
                return produced
            }
        }
    }

    /// Opens `archive` on this source.
    func attach(to archive: OpaquePointer) -> Int32 {
        let context = Unmanaged.passUnretained(self).toOpaque()
        return archive_read_open(archive, context, nil, { _, context, block in
            let source = Unmanaged<GzipSource>.fromOpaque(context!).takeUnretainedValue()
            return la_ssize_t(source.read(block!))
        }, nil)
    }
}
