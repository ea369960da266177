#if canImport(Glibc)
import Glibc
#endif

/// Changing an open file in place.
extension FileDescriptor {
    /// ftruncate(2).
    public func truncate(to size: Int64) throws(SystemError) {
        _ = try retrying("ftruncate") { ftruncate(rawValue, off_t(size)) }
    }

    /// pwrite(2) of every byte at `offset` (short writes are continued); the file
    /// offset is left where it was.
    public func write(_ bytes: [UInt8], at offset: Int64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = try bytes.withUnsafeBytes { buffer in
                Result { () throws(SystemError) in
                    try retrying("pwrite") {
                        pwrite(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
                    }
                }
            }.get()
            done += n
        }
    }

    /// isatty(3): whether this descriptor is a terminal (progress is shown only
    /// to a person watching).
    public var isTerminal: Bool {
        isatty(rawValue) == 1
    }
}
