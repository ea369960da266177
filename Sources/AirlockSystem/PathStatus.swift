#if canImport(Glibc)
import Glibc
#endif

extension FileStatus {
    /// stat(2) of a path, following links (only for paths given on the command
    /// line or in the configuration, never for names found in a tree).
    public init(path: String) throws(SystemError) {
        var st = stat()
        _ = try retrying("stat", Array(path.utf8)) { stat(path, &st) }
        self.init(st)
    }
}
