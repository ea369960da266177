import AirlockChild
import AirlockFormats
import AirlockSystem
import CArchive

/// Where a tar's bytes come from: the drop itself, or a decompressor over it.
///
/// The rule about what may follow a stream lives here, the same for every
/// compressor: a decoder reads the drop to its true end, and ends only when its
/// last stream (or member, or frame) ends exactly where the drop does. More
/// streams of the same compressor may follow one another, as every reader of
/// that format accepts them; any other byte after the last one is rejected,
/// because readers differ on whether they see it.
protocol StreamDecoder: AnyObject {
    /// The next decompressed bytes; empty at the true end of the drop; nil on
    /// failure, with `failure` saying why. Valid until the next call.
    func next() -> UnsafeRawBufferPointer?
    /// Raw bytes of the drop consumed so far.
    var consumed: Int64 { get }
    var failure: String? { get }
    /// The read of the drop that failed, if one did: the machine's fault, not a
    /// verdict on the bytes.
    var readError: SystemError? { get }
}

/// A plain tar: the drop's bytes as they are.
final class PlainSource: StreamDecoder {
    private let file: DropFile
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var consumed: Int64 = 0
    private(set) var failure: String?
    private(set) var readError: SystemError?

    init(file: DropFile, blockSize: Int) {
        self.file = file
        buffer = .allocate(byteCount: blockSize, alignment: 64)
    }

    deinit { buffer.deallocate() }

    func next() -> UnsafeRawBufferPointer? {
        guard failure == nil else { return nil }
        do {
            let n = try file.read(into: buffer)
            consumed += Int64(n)
            return UnsafeRawBufferPointer(rebasing: buffer[0..<n])
        } catch {
            readError = error
            failure = "reading the drop: \(error)"
            return nil
        }
    }
}

/// A compressed tar decompressed by one of libarchive's built-in filters, read
/// through libarchive's raw format so that airlock sees the decompressed bytes
/// before the tar reader does. libarchive consumes from the drop only what its
/// decompressor used, and looks ahead (without consuming) for another stream
/// when one ends, so whatever it leaves unconsumed is what follows the last
/// stream.
final class FilterSource: StreamDecoder {
    private let archive: OpaquePointer
    private let source: DropSource
    private let dropSize: Int64
    private let name: String
    private var ended = false
    private(set) var failure: String?

    var consumed: Int64 { archive_filter_bytes(archive, -1) }
    var readError: SystemError? { source.readError }

    /// The filter for `format` opened on `drop`, or the violation that prevents it.
    static func open(_ format: ArchiveFormat, file: DropFile, dropSize: Int64,
                     blockSize: Int) -> Result<FilterSource, FilterOpenFailure> {
        guard let filter = FilterSource.filter(for: format), let archive = archive_read_new() else {
            return .failure(.system(SystemError("archive_read_new", nil, .outOfMemory)))
        }
        let decoder = FilterSource(archive: archive, source: DropSource(file: file, size: dropSize, blockSize: blockSize),
                                  dropSize: dropSize, name: format.rawValue)
        var status = archive_read_support_format_raw(archive)
        // ARCHIVE_WARN from a filter means libarchive would run an external program: refuse.
        if status == ARCHIVE_OK { status = filter.enable(archive) }
        guard status == ARCHIVE_OK else {
            return .failure(.unsupported("this libarchive has no built-in \(format.rawValue) decompressor"))
        }
        guard decoder.source.attach(to: archive) == ARCHIVE_OK else {
            if let error = decoder.readError { return .failure(.unreadable(error)) }
            return .failure(.corrupt(ArchiveScan.message(archive)))
        }
        // Without its filter's bid, libarchive would pass the raw bytes through
        // unchanged: the first bytes looked like this compressor's, the stream is not.
        guard archive_filter_count(archive) == 2, archive_filter_code(archive, 0) == filter.code else {
            return .failure(.unsupported("not a \(format.rawValue) stream: libarchive's \(format.rawValue) reader does not recognise it"))
        }
        var entry: OpaquePointer?
        guard archive_read_next_header(archive, &entry) == ARCHIVE_OK else {
            if let error = decoder.readError { return .failure(.unreadable(error)) }
            return .failure(.corrupt(ArchiveScan.message(archive)))
        }
        return .success(decoder)
    }

    enum FilterOpenFailure: Error {
        case unsupported(String)
        case corrupt(String)
        case system(SystemError)
        /// Reading the drop failed: a disk fault, not a verdict.
        case unreadable(SystemError)
    }

    private struct Filter {
        let code: Int32
        let enable: (OpaquePointer) -> Int32
    }

    private static func filter(for format: ArchiveFormat) -> Filter? {
        switch format {
        case .tarBzip2: return Filter(code: ARCHIVE_FILTER_BZIP2, enable: { archive_read_support_filter_bzip2($0) })
        case .tarXz: return Filter(code: ARCHIVE_FILTER_XZ, enable: { archive_read_support_filter_xz($0) })
        case .tarZstd: return Filter(code: ARCHIVE_FILTER_ZSTD, enable: { archive_read_support_filter_zstd($0) })
        case .tarLzip: return Filter(code: ARCHIVE_FILTER_LZIP, enable: { archive_read_support_filter_lzip($0) })
        case .tarLzma: return Filter(code: ARCHIVE_FILTER_LZMA, enable: { archive_read_support_filter_lzma($0) })
        default: return nil
        }
    }

    private init(archive: OpaquePointer, source: DropSource, dropSize: Int64, name: String) {
        self.archive = archive
        self.source = source
        self.dropSize = dropSize
        self.name = name
    }

    deinit { archive_read_free(archive) }

    func next() -> UnsafeRawBufferPointer? {
        guard failure == nil else { return nil }
        if ended { return UnsafeRawBufferPointer(start: nil, count: 0) }
        while true {
            var block: UnsafeRawPointer?
            var size = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(archive, &block, &size, &offset)
            if status == ARCHIVE_EOF {
                let left = dropSize - consumed
                guard left == 0 else {
                    failure = "\(left) bytes follow the end of the \(name) stream"
                    return nil
                }
                ended = true
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            guard status == ARCHIVE_OK else {
                failure = "\(name) data is corrupt: \(ArchiveScan.message(archive))"
                return nil
            }
            if size > 0 { return UnsafeRawBufferPointer(start: block, count: size) }
        }
    }
}

extension GzipSource: StreamDecoder {
    func next() -> UnsafeRawBufferPointer? {
        var block: UnsafeRawPointer?
        let n = read(&block)
        guard n >= 0 else { return nil }
        return UnsafeRawBufferPointer(start: n == 0 ? nil : block, count: n)
    }
}
