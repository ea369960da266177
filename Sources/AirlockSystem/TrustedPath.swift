import CAirlockShims
#if canImport(Glibc)
import Glibc
#endif

/// Walks a path given on the command line to the directory it names the way a
/// program run as the superuser must: one component at a time, each opened with
/// O_PATH | O_NOFOLLOW and examined through its own descriptor, so a symbolic link
/// is seen as itself and cannot be swapped between the look and the use. A link
/// the superuser owns is followed (its target walked the same way, at most 40
/// links in all, as the kernel allows); a link anyone else owns is refused, since
/// its owner could point it at any file (`ROOT/link -> /etc`).
public enum TrustedPath {
    /// The most links one walk follows (the kernel's own limit, MAXSYMLINKS).
    static let maxLinks = 40

    /// The directory `path` names, opened with O_PATH (for *at calls and fstat).
    ///
    /// - Throws: `SystemError` with `.tooManyLinks` and the link's name when a
    ///   component is a link another user owns (the operation names the owner)
    ///   or there are too many links; the open's own errno otherwise.
    public static func openDirectory(path: String) throws(SystemError) -> FileDescriptor {
        var pending = components(path)
        var current = OwnedDescriptor(try start(path.hasPrefix("/") ? "/" : "."))
        var links = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            let next = OwnedDescriptor(try open(current.descriptor, name))
            let status = try next.descriptor.status()
            if status.kind == .directory {
                // Walk on from the very directory examined, so nothing can be swapped in.
                current = next
                continue
            }
            links += 1
            let target = try linkTarget(of: next.descriptor, name, status, links: links)
            next.close()
            if target.first == UInt8(ascii: "/") {
                current = OwnedDescriptor(try start("/"))
            }
            pending = components(target) + pending
        }
        return current.take()
    }

    /// The directory `path` names, walked as `openDirectory(path:)` does, then
    /// opened for reading (listing, syncing) through the very directory walked to.
    public static func openReadableDirectory(path: String) throws(SystemError) -> FileDescriptor {
        try openDirectory(path: path).closeAfter { (found) throws(SystemError) in
            try found.open([UInt8(ascii: ".")], O_RDONLY | O_DIRECTORY)
        }
    }

    /// The components of a path, without empty ones and `.`.
    static func components(_ path: String) -> [[UInt8]] {
        components(Array(path.utf8))
    }

    static func components(_ path: [UInt8]) -> [[UInt8]] {
        path.split(separator: UInt8(ascii: "/")).map(Array.init).filter { $0 != [UInt8(ascii: ".")] }
    }

    /// Where a walk starts: `/` or the working directory, with O_PATH.
    static func start(_ name: String) throws(SystemError) -> FileDescriptor {
        let fd = try retrying("open", Array(name.utf8)) { airlock_open_path(AT_FDCWD, name) }
        return FileDescriptor(rawValue: fd)
    }

    /// openat(2) with O_PATH | O_NOFOLLOW of `name` beneath `directory`.
    static func open(_ directory: FileDescriptor, _ name: [UInt8]) throws(SystemError) -> FileDescriptor {
        let fd = try retrying("open", name) { name.withNulTerminated { airlock_open_path(directory.rawValue, $0) } }
        return FileDescriptor(rawValue: fd)
    }

    /// The target of `name`, opened as `link` with `status`, when it is a link
    /// the walk may follow: the superuser's own, within the limit of links.
    static func linkTarget(of link: FileDescriptor, _ name: [UInt8], _ status: FileStatus, links: Int) throws(SystemError) -> [UInt8] {
        guard status.kind == .symlink else { throw SystemError("open directory", name, .notDirectory) }
        guard status.owner == 0 else {
            throw SystemError("refuse to follow a link owned by uid \(status.owner)", name, .tooManyLinks)
        }
        guard links <= maxLinks else { throw SystemError("follow links", name, .tooManyLinks) }
        return try linkTarget(link, name)
    }

    /// readlinkat(2) of the link `link` holds; at most PATH_MAX bytes.
    static func linkTarget(_ link: FileDescriptor, _ name: [UInt8]) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = try buffer.withUnsafeMutableBufferPointer { raw in
            Result { () throws(SystemError) in
                try retrying("readlink", name) {
                    airlock_read_link(link.rawValue, UnsafeMutableRawPointer(raw.baseAddress!).assumingMemoryBound(to: CChar.self), Int(PATH_MAX))
                }
            }
        }.get()
        guard length < Int(PATH_MAX) else { throw SystemError("readlink", name, Errno(rawValue: ENAMETOOLONG)) }
        return Array(buffer[0..<length])
    }
}
