#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Makes the directory at `path` and every missing one above it, like
    /// `mkdir -p` (only for a path given on the command line): mkdir(2) of each
    /// prefix in turn, with 0777 narrowed by the umask; what exists is kept.
    public static func makeDirectories(path: String, mode: FileMode = 0o777) throws(SystemError) {
        let absolute = path.hasPrefix("/")
        var prefix = absolute ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += (prefix.isEmpty || prefix == "/" ? "" : "/") + component
            do {
                _ = try retrying("mkdir", Array(prefix.utf8)) { mkdir(prefix, mode) }
            } catch where error.errno == .exists {
                continue
            }
        }
    }
}
