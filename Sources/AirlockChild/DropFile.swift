import AirlockSystem
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

/// Where a decoder's system call failed, as its verdict reports it: the
/// supervisor words the deferral (or the failure) after it.
public enum SystemFailureStage: String, Sendable {
    case readingDrop = "reading-drop"
    case writingStaging = "writing-staging"
}
