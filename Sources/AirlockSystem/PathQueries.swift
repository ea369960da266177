#if canImport(Glibc)
import Glibc
#endif

/// Questions about a path given on the command line or found in /proc (never a
/// name found in a tree, which is asked about beneath its directory's descriptor).
public enum PathQueries {
    /// readlink(2): the target a link names, as bytes; at most PATH_MAX of them.
    public static func linkTarget(_ path: String) throws(SystemError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = try buffer.withUnsafeMutableBufferPointer { raw in
            Result { () throws(SystemError) in
                try retrying("readlink", Array(path.utf8)) {
                    readlink(path, UnsafeMutableRawPointer(raw.baseAddress!).assumingMemoryBound(to: CChar.self), Int(PATH_MAX))
                }
            }
        }.get()
        return Array(buffer[0..<length])
    }

    /// access(2) with X_OK: whether this process may execute `path`.
    public static func isExecutable(_ path: String) -> Bool {
        access(path, X_OK) == 0
    }
}
