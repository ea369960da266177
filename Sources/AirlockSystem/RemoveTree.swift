#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Removes `name` beneath this directory and everything under it, never following
    /// a link: each directory is opened with O_NOFOLLOW and emptied through its own
    /// descriptor (`Root.walk`). A missing `name` is not an error.
    ///
    /// - Parameter depthLimit: how deep the walk may go before it gives up (ELOOP).
    public func removeTree(_ name: [UInt8], depthLimit: Int = 256) throws(SystemError) {
        let status: FileStatus
        do {
            status = try self.status(of: name)
        } catch where error.errno == .noEntry {
            return
        }
        guard status.kind == .directory else {
            try unlink(name)
            return
        }
        guard depthLimit > 0 else { throw SystemError("removeTree", name, .tooManyLinks) }
        let directory = OwnedDescriptor(try openDirectory(name))
        var removal = Removal()
        do {
            try Root(directory.descriptor).walk(depthLimit: depthLimit - 1, operation: "removeTree", &removal)
        } catch let error as SystemError {
            throw error
        } catch {
            preconditionFailure("removing a tree fails only by a system call: \(error)")
        }
        directory.close()
        try removeDirectory(name)
    }
}

/// Empties each directory bottom up: a file or link is unlinked where it is met,
/// a directory removed once everything beneath it is; one that vanished first is
/// passed over.
private struct Removal: TreeVisitor {
    mutating func visit(_ name: [UInt8], in directory: FileDescriptor, path: [UInt8]) throws -> Bool {
        let status: FileStatus
        do {
            status = try directory.status(of: name)
        } catch where error.errno == .noEntry {
            return false
        }
        guard status.kind == .directory else {
            try directory.unlink(name)
            return false
        }
        return true
    }

    mutating func leave(_ directory: FileDescriptor, named name: [UInt8], in parent: FileDescriptor, path: [UInt8],
                        entries: Int) throws {
        try parent.removeDirectory(name)
    }
}
