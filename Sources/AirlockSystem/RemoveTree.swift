#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Removes `name` beneath this directory and everything under it, never following
    /// a link: each directory is opened with O_NOFOLLOW and emptied through its own
    /// descriptor. A missing `name` is not an error.
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
        let directory = try openDirectory(name)
        try directory.closeAfter { (directory) throws(SystemError) in
            for child in try directory.entryNames() {
                try directory.removeTree(child, depthLimit: depthLimit - 1)
            }
        }
        try removeDirectory(name)
    }
}
