#if canImport(Glibc)
import Glibc
#endif

extension CurrentProcess {
    /// readlink(2) of /proc/self/exe: the running program's own file, whatever
    /// PATH or the working directory say; nil when it cannot be read.
    public static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// access(2) with X_OK: whether this process may execute the file at `path`.
    public static func mayExecute(_ path: String) -> Bool {
        access(path, X_OK) == 0
    }
}
