#if canImport(Glibc)
import Glibc
#endif

extension Array where Element == UInt8 {
    /// The bytes of a NUL-terminated C string handed out by a C library
    /// (libarchive's names, libmagic's answers), without the NUL and without
    /// repairing invalid UTF-8 the way `String(cString:)` would.
    public init(cString: UnsafePointer<CChar>) {
        self = Array(UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
    }
}

extension Errno {
    /// ENOMEM: what a C library's allocation failure is reported as.
    public static let outOfMemory = Errno(rawValue: ENOMEM)
    /// EILSEQ: libarchive's ARCHIVE_ERRNO_FILE_FORMAT on Linux, "no reader recognised this".
    public static let illegalByteSequence = Errno(rawValue: EILSEQ)
}
