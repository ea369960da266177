import AirlockSystem
import CArchive
#if DEBUG
import Synchronization
#endif

/// The drop as the decoder child reads it. Every read of the drop, by airlock's
/// ZIP directory parser or by libarchive, goes through here, so a failed read is
/// known for what it is: the machine's fault (an EIO from a failing disk), which
/// defers the drop, never a verdict on its bytes.
public struct DropFile: Sendable {
    public let descriptor: FileDescriptor

    public init(_ descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// pread(2) until `buffer` is full or the file ends; the count read.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        #if DEBUG
        if DropFile.failsReads.load(ordering: .relaxed) { throw SystemError("pread", nil, .ioError) }
        #endif
        return try descriptor.read(into: buffer, at: offset)
    }

    /// read(2) at the descriptor's own position; the count read, 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        #if DEBUG
        if DropFile.failsReads.load(ordering: .relaxed) { throw SystemError("read", nil, .ioError) }
        #endif
        return try descriptor.read(into: buffer)
    }

    /// The whole drop, read from the descriptor's position; EFBIG past `limit` bytes.
    public func readAll(limit: Int) throws(SystemError) -> [UInt8] {
        #if DEBUG
        if DropFile.failsReads.load(ordering: .relaxed) { throw SystemError("read", nil, .ioError) }
        #endif
        return try descriptor.readAll(limit: limit)
    }

    #if DEBUG
    /// Test-only: every read of the drop fails with EIO, as on a failing disk.
    static let failsReads = Atomic<Bool>(false)

    /// Test-only, selected by the decoder-fault variable like the other faults.
    public static func failEveryRead() { failsReads.store(true, ordering: .relaxed) }
    #endif
}

/// libarchive's input, read through `DropFile` by position, with the seek that
/// the seekable ZIP and 7z readers need. libarchive's own fd reader would report
/// a failed read only as a message; here the error is kept, typed, so the scan can
/// tell a disk fault from a malformed archive.
final class DropSource {
    private let file: DropFile
    private let size: Int64
    private let buffer: UnsafeMutableRawBufferPointer
    private var position: Int64 = 0
    /// The read that failed, if one did.
    private(set) var readError: SystemError?

    init(file: DropFile, size: Int64, blockSize: Int) {
        self.file = file
        self.size = size
        buffer = .allocate(byteCount: blockSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    private func read(_ block: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        do {
            let n = try file.read(into: buffer, at: position)
            position += Int64(n)
            block.pointee = UnsafeRawPointer(buffer.baseAddress!)
            return n
        } catch {
            readError = error
            return -1
        }
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = size
        default: return Int64(ARCHIVE_FATAL)
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else { return Int64(ARCHIVE_FATAL) }
        position = target
        return target
    }

    private func skip(_ request: Int64) -> Int64 {
        let skipped = max(0, min(request, size - position))
        position += skipped
        return skipped
    }

    /// Opens `archive` on this source.
    func attach(to archive: OpaquePointer) -> Int32 {
        let context = Unmanaged.passUnretained(self).toOpaque()
        archive_read_set_seek_callback(archive) { _, context, offset, whence in
            Unmanaged<DropSource>.fromOpaque(context!).takeUnretainedValue().seek(offset, whence)
        }
        return archive_read_open2(archive, context, nil, { _, context, block in
            la_ssize_t(Unmanaged<DropSource>.fromOpaque(context!).takeUnretainedValue().read(block!))
        }, { _, context, request in
            Unmanaged<DropSource>.fromOpaque(context!).takeUnretainedValue().skip(request)
        }, nil)
    }
}

/// Where a decoder's system call failed, as its verdict reports it: the
/// supervisor words the deferral (or the failure) after it.
public enum SystemFailureStage: String, Sendable {
    case readingDrop = "reading-drop"
    case writingStaging = "writing-staging"
}
