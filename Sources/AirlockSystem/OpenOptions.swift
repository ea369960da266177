import CAirlockShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The mode bits of a file (`mode_t`): what the layers above hand to the kernel
/// without naming the C type.
public typealias FileMode = mode_t

/// A group id (`gid_t`).
public typealias GroupID = gid_t

/// The flags of open(2) and openat(2), typed so callers never spell `O_*`.
/// O_CLOEXEC is always added by the opening call itself.
public struct OpenOptions: OptionSet, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// O_RDONLY (zero: the absence of a write mode).
    public static let readOnly = OpenOptions(rawValue: O_RDONLY)
    public static let writeOnly = OpenOptions(rawValue: O_WRONLY)
    public static let readWrite = OpenOptions(rawValue: O_RDWR)
    public static let create = OpenOptions(rawValue: O_CREAT)
    /// O_EXCL: with `create`, fails with EEXIST rather than open what is there.
    public static let exclusive = OpenOptions(rawValue: O_EXCL)
    public static let truncate = OpenOptions(rawValue: O_TRUNC)
    public static let append = OpenOptions(rawValue: O_APPEND)
    /// O_NOFOLLOW: a link at the last component fails with ELOOP.
    public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
    /// O_NONBLOCK: a FIFO or device does not hold the open.
    public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
    public static let directory = OpenOptions(rawValue: O_DIRECTORY)
    /// O_PATH: a descriptor that only names the file, for use as the directory of
    /// openat(2) where search (execute) permission is all the caller has.
    public static let pathOnly = OpenOptions(rawValue: airlock_open_path_flag)
    /// O_NOCTTY: a terminal opened is never made the controlling one.
    public static let noControllingTerminal = OpenOptions(rawValue: O_NOCTTY)
    /// O_NOATIME: reading leaves the access time alone. Refused with EPERM to a
    /// process that neither owns the file nor holds CAP_FOWNER; see
    /// `open(forReading:_:)`, which falls back.
    public static let noAccessTime = OpenOptions(rawValue: airlock_open_no_access_time_flag)
}

extension FileDescriptor {
    /// openat2(2) of a relative path beneath this directory (`airlock_open_beneath`):
    /// resolved in one call, never above this directory and through no link, so
    /// a path of several components costs one call where a walk from descriptor
    /// to descriptor costs one per component. Throws ENOSYS where the kernel
    /// lacks openat2, and whatever a system-call filter answers for it.
    public func open(beneath path: [UInt8], _ options: OpenOptions, mode: FileMode = 0) throws(SystemError) -> FileDescriptor {
        let fd = try retrying("openat2", path) {
            path.withNulTerminated { airlock_open_beneath(rawValue, $0, options.rawValue | O_CLOEXEC, UInt32(mode)) }
        }
        return FileDescriptor(rawValue: fd)
    }

    /// openat(2) of one name beneath this directory, with typed options.
    public func open(_ name: [UInt8], _ options: OpenOptions, mode: FileMode = 0) throws(SystemError) -> FileDescriptor {
        try open(name, options.rawValue, mode: mode)
    }

    /// openat(2) of one name to read it, with O_NOATIME, so that reading a file
    /// just written costs no inode update: the first read of a new file would
    /// otherwise set its access time (relatime), a journaled change per file,
    /// and staging is read file by file right after the decoder wrote it. Where
    /// the flag is refused (EPERM: the file is not this process's own), opens
    /// without it, as does every later call of the process.
    public func open(forReading name: [UInt8], _ options: OpenOptions) throws(SystemError) -> FileDescriptor {
        if !accessTimeRefused.load(ordering: .relaxed) {
            do {
                return try open(name, options.union(.noAccessTime))
            } catch where error.errno == .notPermitted {
                accessTimeRefused.store(true, ordering: .relaxed)
            }
        }
        return try open(name, options)
    }

    /// open(2) of a path (only for paths given on the command line or by the
    /// configuration, never for names found in a tree), with O_CLOEXEC.
    public static func open(path: String, _ options: OpenOptions, mode: FileMode = 0) throws(SystemError) -> FileDescriptor {
        let fd = try retrying("open", Array(path.utf8)) { Glibc.open(path, options.rawValue | O_CLOEXEC, mode) }
        return FileDescriptor(rawValue: fd)
    }
}

/// Set once this process has been refused O_NOATIME (`open(forReading:_:)`).
private let accessTimeRefused = Atomic<Bool>(false)
