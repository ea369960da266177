import AirlockChild
import AirlockSystem
import CArchive

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
    /// Bytes handed to libarchive so far. Unlike libarchive's filter position,
    /// which a seek moves back, this only grows: a 7z reader that reads its
    /// header at the end and then seeks back to the data would otherwise make an
    /// entry's compressed bytes (the position's growth over its data) negative.
    private(set) var delivered: Int64 = 0

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
            delivered += Int64(n)
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
