#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims

/// An open file descriptor. Closing is explicit (`close()`, or `closeAfter`), so
/// every path that opens one says where it ends.
public struct FileDescriptor: Hashable, Sendable {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        precondition(rawValue >= 0, "a descriptor is never negative")
        self.rawValue = rawValue
    }

    /// Runs `body` and closes the descriptor afterwards, whatever happens.
    public func closeAfter<T, E: Error>(_ body: (FileDescriptor) throws(E) -> T) throws(E) -> T {
        defer { close() }
        return try body(self)
    }

    /// close(2). Not retried on EINTR: Linux has released the descriptor already.
    public func close() {
        _ = Glibc.close(rawValue)
    }

    // MARK: Opening relative to this directory

    /// openat(2) of one name beneath this directory. `flags` always gain O_CLOEXEC.
    public func open(_ name: [UInt8], _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
        let fd = try retrying("openat", name) {
            name.withNulTerminated { openat(rawValue, $0, flags | O_CLOEXEC, mode) }
        }
        return FileDescriptor(rawValue: fd)
    }

    /// Opens a directory beneath this one without following a link at the last component.
    public func openDirectory(_ name: [UInt8]) throws(SystemError) -> FileDescriptor {
        try open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
    }

    /// Opens a directory by path (only for the root given on the command line).
    public static func openDirectory(path: String) throws(SystemError) -> FileDescriptor {
        let fd = try retrying("open", Array(path.utf8)) { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        return FileDescriptor(rawValue: fd)
    }

    /// mkdirat(2).
    public func makeDirectory(_ name: [UInt8], mode: mode_t) throws(SystemError) {
        _ = try retrying("mkdirat", name) { name.withNulTerminated { mkdirat(rawValue, $0, mode) } }
    }

    /// unlinkat(2) of a non-directory.
    public func unlink(_ name: [UInt8]) throws(SystemError) {
        _ = try retrying("unlinkat", name) { name.withNulTerminated { unlinkat(rawValue, $0, 0) } }
    }

    /// unlinkat(2) with AT_REMOVEDIR.
    public func removeDirectory(_ name: [UInt8]) throws(SystemError) {
        _ = try retrying("unlinkat", name) { name.withNulTerminated { unlinkat(rawValue, $0, AT_REMOVEDIR) } }
    }

    /// renameat(2): may replace an existing entry; only for our own private names.
    public func rename(_ name: [UInt8], to target: FileDescriptor, _ newName: [UInt8]) throws(SystemError) {
        _ = try retrying("renameat", name) {
            name.withNulTerminated { old in newName.withNulTerminated { new in renameat(rawValue, old, target.rawValue, new) } }
        }
    }

    /// renameat2(2) with RENAME_NOREPLACE: never replaces what exists (EEXIST instead).
    public func renameNoReplace(_ name: [UInt8], to target: FileDescriptor, _ newName: [UInt8]) throws(SystemError) {
        _ = try retrying("renameat2", newName) {
            name.withNulTerminated { old in
                newName.withNulTerminated { new in airlock_renameat_noreplace(rawValue, old, target.rawValue, new) }
            }
        }
    }

    /// fstatat(2) with AT_SYMLINK_NOFOLLOW: what the name is, without opening it.
    public func status(of name: [UInt8]) throws(SystemError) -> FileStatus {
        var st = stat()
        _ = try retrying("fstatat", name) { name.withNulTerminated { fstatat(rawValue, $0, &st, AT_SYMLINK_NOFOLLOW) } }
        return FileStatus(st)
    }

    // MARK: This descriptor

    /// fstat(2).
    public func status() throws(SystemError) -> FileStatus {
        var st = stat()
        _ = try retrying("fstat") { fstat(rawValue, &st) }
        return FileStatus(st)
    }

    /// fstatvfs(2): free bytes for an unprivileged writer.
    public func availableBytes() throws(SystemError) -> UInt64 {
        var st = statvfs()
        _ = try retrying("fstatvfs") { fstatvfs(rawValue, &st) }
        return UInt64(st.f_bavail) * UInt64(st.f_frsize)
    }

    /// fchmod(2).
    public func changeMode(_ mode: mode_t) throws(SystemError) {
        _ = try retrying("fchmod") { fchmod(rawValue, mode) }
    }

    /// fchown(2) of the group alone (the owner is left as it is).
    public func changeGroup(_ group: gid_t) throws(SystemError) {
        _ = try retrying("fchown") { fchown(rawValue, uid_t.max, group) }
    }

    /// fsync(2).
    public func sync() throws(SystemError) {
        _ = try retrying("fsync") { fsync(rawValue) }
    }

    /// sync_file_range(2) with SYNC_FILE_RANGE_WRITE over the whole file: starts
    /// writing its dirty pages out and returns without waiting for them, so a
    /// later fsync or syncfs finds less left to wait for. It makes nothing durable.
    public func startWriteback() throws(SystemError) {
        _ = try retrying("sync_file_range") { airlock_start_writeback(rawValue) }
    }

    /// fallocate(2) with FALLOC_FL_KEEP_SIZE over the first `bytes` bytes: their
    /// blocks are allocated now, in one call, and the file's size stays as it is
    /// (writes grow it). Fails with EOPNOTSUPP where the filesystem cannot.
    public func reserveSpace(_ bytes: Int64) throws(SystemError) {
        _ = try retrying("fallocate") { airlock_reserve_space(rawValue, bytes) }
    }

    /// syncfs(2): everything on this descriptor's filesystem.
    public func syncFilesystem() throws(SystemError) {
        _ = try retrying("syncfs") { airlock_syncfs(rawValue) }
    }

    /// posix_fadvise(2) with POSIX_FADV_DONTNEED over the whole file: its clean
    /// pages leave the page cache now rather than when the file is removed. It
    /// changes no byte; a later read goes to the disk.
    public func dropCachedPages() throws(SystemError) {
        let result = posix_fadvise(rawValue, 0, 0, POSIX_FADV_DONTNEED)
        guard result == 0 else { throw SystemError("posix_fadvise", nil, Errno(rawValue: result)) }
    }

    /// dup(2) with close-on-exec.
    public func duplicate() throws(SystemError) -> FileDescriptor {
        FileDescriptor(rawValue: try retrying("fcntl(F_DUPFD_CLOEXEC)") { fcntl(rawValue, F_DUPFD_CLOEXEC, 0) })
    }

    /// Sets or clears O_NONBLOCK.
    public func setBlocking(_ blocking: Bool) throws(SystemError) {
        let flags = try retrying("fcntl(F_GETFL)") { fcntl(rawValue, F_GETFL) }
        let wanted = blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK
        _ = try retrying("fcntl(F_SETFL)") { fcntl(rawValue, F_SETFL, wanted) }
    }

    /// read(2) once, retrying EINTR; 0 means end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        try retrying("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// pread(2) until `buffer` is full or the file ends; returns the count read.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = try retrying("pread") {
                pread(rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// write(2) until every byte is written (short writes are continued).
    public func writeAll(_ buffer: UnsafeRawBufferPointer) throws(SystemError) {
        var done = 0
        while done < buffer.count {
            let n = try retrying("write") { Glibc.write(rawValue, buffer.baseAddress! + done, buffer.count - done) }
            done += n
        }
    }

    public func writeAll(_ bytes: [UInt8]) throws(SystemError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try writeAll(buffer) }
        }
        try result.get()
    }

    /// Reads to end of file, refusing more than `limit` bytes.
    public func readAll(limit: Int) throws(SystemError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try read(into: buffer) }
            }.get()
            if n == 0 { return result }
            guard result.count + n <= limit else { throw SystemError("read", nil, Errno(rawValue: EFBIG)) }
            result += chunk[0..<n]
        }
    }

    /// The names in this directory, without `.` and `..`, in no particular order.
    public func entryNames() throws(SystemError) -> [[UInt8]] {
        try entries().map(\.name)
    }

    /// The names in this directory, without `.` and `..`, in no particular order,
    /// each with the kind readdir(3) reports (`d_type`): a hint, nil where the
    /// filesystem gives none (DT_UNKNOWN). A caller that decides on the kind asks
    /// the entry itself (fstatat, or fstat once it is open without following links).
    public func entries() throws(SystemError) -> [(name: [UInt8], kind: FileStatus.Kind?)] {
        let copy = try duplicate()
        guard let dir = fdopendir(copy.rawValue) else {
            let error = Errno.current
            copy.close()
            throw SystemError("fdopendir", nil, error)
        }
        defer { closedir(dir) }
        rewinddir(dir)
        var found: [(name: [UInt8], kind: FileStatus.Kind?)] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw SystemError("readdir", nil, Errno.current) }
                return found
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [0x2E] || name == [0x2E, 0x2E] { continue }
            found.append((name, FileStatus.Kind(directoryEntryType: entry.pointee.d_type)))
        }
    }
}

/// The parts of `struct stat` airlock decides on.
public struct FileStatus: Equatable, Sendable {
    public enum Kind: Sendable, Equatable { case regular, directory, symlink, fifo, socket, characterDevice, blockDevice, unknown }

    public let kind: Kind
    public let permissions: mode_t
    public let size: Int64
    public let linkCount: UInt64
    public let device: UInt64
    public let inode: UInt64
    /// The owning user's id, for reports on entries airlock cannot read or move.
    public let owner: UInt32
    /// The owning group's id.
    public let group: UInt32
    public let modified: timespec
    public let changed: timespec

    init(_ st: stat) {
        kind = Kind(st.st_mode)
        permissions = st.st_mode & 0o7777
        size = Int64(st.st_size)
        linkCount = UInt64(st.st_nlink)
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        owner = UInt32(st.st_uid)
        group = UInt32(st.st_gid)
        modified = st.st_mtim
        changed = st.st_ctim
    }
}

extension FileStatus.Kind {
    init(_ mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symlink
        case S_IFIFO: self = .fifo
        case S_IFSOCK: self = .socket
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        default: self = .unknown
        }
    }

    /// A directory entry's `d_type`; nil for DT_UNKNOWN (or a type not listed).
    init?(directoryEntryType type: UInt8) {
        switch Int(type) {
        case Int(DT_REG): self = .regular
        case Int(DT_DIR): self = .directory
        case Int(DT_LNK): self = .symlink
        case Int(DT_FIFO): self = .fifo
        case Int(DT_SOCK): self = .socket
        case Int(DT_CHR): self = .characterDevice
        case Int(DT_BLK): self = .blockDevice
        default: return nil
        }
    }
}

extension FileStatus {
    /// Same file, same size, same modification and change times.
    public func isUnchanged(comparedTo other: FileStatus) -> Bool {
        device == other.device && inode == other.inode && size == other.size
            && modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec
            && changed.tv_sec == other.changed.tv_sec && changed.tv_nsec == other.changed.tv_nsec
    }

    public static func == (a: FileStatus, b: FileStatus) -> Bool {
        a.kind == b.kind && a.permissions == b.permissions && a.linkCount == b.linkCount && a.isUnchanged(comparedTo: b)
    }
}

extension Array where Element == UInt8 {
    /// Calls `body` with a NUL-terminated copy. A name holding NUL is a programmer
    /// error here: names are validated before they reach the kernel.
    @inline(__always)
    public func withNulTerminated<T>(_ body: (UnsafePointer<CChar>) -> T) -> T {
        precondition(!contains(0), "a name passed to the kernel holds NUL")
        return (self + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}
