import AirlockText
#if canImport(Glibc)
import Glibc
#endif

/// A POSIX error number, read right after the call that set it.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno`, read immediately after a failed call.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let exists = Errno(rawValue: EEXIST)
    public static let noEntry = Errno(rawValue: ENOENT)
    public static let tooManyLinks = Errno(rawValue: ELOOP)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let crossDevice = Errno(rawValue: EXDEV)
    public static let notEmpty = Errno(rawValue: ENOTEMPTY)
    public static let readOnlyFilesystem = Errno(rawValue: EROFS)

    /// The symbolic name (`EEXIST`), as `strerrorname_np` would give it.
    public var name: String {
        switch rawValue {
        case EPERM: return "EPERM"
        case ENOENT: return "ENOENT"
        case EINTR: return "EINTR"
        case EIO: return "EIO"
        case EBADF: return "EBADF"
        case EAGAIN: return "EAGAIN"
        case ENOMEM: return "ENOMEM"
        case EACCES: return "EACCES"
        case EEXIST: return "EEXIST"
        case EXDEV: return "EXDEV"
        case ENOTDIR: return "ENOTDIR"
        case EISDIR: return "EISDIR"
        case EINVAL: return "EINVAL"
        case EMFILE: return "EMFILE"
        case ENFILE: return "ENFILE"
        case EFBIG: return "EFBIG"
        case ENOSPC: return "ENOSPC"
        case EROFS: return "EROFS"
        case EMLINK: return "EMLINK"
        case EPIPE: return "EPIPE"
        case ENAMETOOLONG: return "ENAMETOOLONG"
        case ENOTEMPTY: return "ENOTEMPTY"
        case ELOOP: return "ELOOP"
        case EDQUOT: return "EDQUOT"
        case ENOSYS: return "ENOSYS"
        case ESRCH: return "ESRCH"
        case ECHILD: return "ECHILD"
        case ETXTBSY: return "ETXTBSY"
        default: return "errno \(rawValue)"
        }
    }

    public var description: String {
        guard let message = strerror(rawValue) else { return name }
        return "\(name) (\(String(cString: message)))"
    }

    /// True for failures of the machine rather than of the input: the disk is full,
    /// the quota is spent, a permission is missing, the filesystem is read-only.
    /// (ENOMEM is not among them: in a decoder child it is its address-space limit.)
    public var isEnvironmental: Bool {
        [Errno.noSpace, .quotaExceeded, .permissionDenied, .notPermitted, .readOnlyFilesystem,
         Errno(rawValue: EIO), Errno(rawValue: ENFILE)].contains(self)
    }
}

/// A failed system call on a named thing, in the manner of Go's `PathError`:
/// `mkdirat "docs/a": EEXIST (File exists)`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let operation: String
    public let name: String?
    public let errno: Errno

    public init(_ operation: String, _ name: [UInt8]? = nil, _ errno: Errno) {
        self.operation = operation
        self.name = name.map { EscapedName($0).text }
        self.errno = errno
    }

    public init(_ operation: String, text: String, _ errno: Errno) {
        self.operation = operation
        self.name = EscapedName(Array(text.utf8)).text
        self.errno = errno
    }

    public var description: String {
        if let name { return "\(operation) \"\(name)\": \(errno)" }
        return "\(operation): \(errno)"
    }
}

/// Calls `body` until it stops failing with `EINTR`; returns its result or throws
/// the errno it left, tagged with the operation. Internal: the layers above call
/// the typed wrappers, never the kernel.
@inline(__always)
func retrying<T: BinaryInteger>(_ operation: String, _ name: [UInt8]? = nil, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        throw SystemError(operation, name, error)
    }
}
