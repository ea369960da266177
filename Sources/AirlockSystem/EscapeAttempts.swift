#if DEBUG
#if canImport(Glibc)
import Glibc
#endif

/// Debug builds only: the raw calls a subverted decoder would make to get out of
/// its confinement, for the decoder's test faults. Each is one plain system call
/// (no retry, no typed error) and answers with the errno it ended with, 0 when it
/// succeeded, so a test sees exactly what Landlock, seccomp and the limits let
/// through. Nothing in a release build can reach them.
package enum EscapeAttempts {
    /// openat(2) creating `name` beneath the directory `directory`.
    package static func create(_ name: String, beneath directory: FileDescriptor) -> Int32 {
        outcome(openat(directory.rawValue, name, O_WRONLY | O_CREAT | O_EXCL, 0o644))
    }

    /// open(2) creating the file at `path`.
    package static func create(path: String) -> Int32 {
        outcome(open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644))
    }

    /// open(2) of `path` for reading.
    package static func read(path: String) -> Int32 {
        outcome(open(path, O_RDONLY))
    }

    /// socket(2) and connect(2) to `port` on the loopback address.
    package static func connectLoopback(port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return errno }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return outcome(withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        })
    }

    /// execv(2) of `path` with `arguments` (the program's name first).
    package static func execute(_ path: String, _ arguments: [String]) -> Int32 {
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        return outcome(execv(path, argv))
    }

    /// fork(2) (glibc's, a clone(2) without CLONE_THREAD): a new process, which
    /// exits at once and is waited for.
    package static func startProcess() -> Int32 {
        let pid = fork()
        if pid == 0 { _exit(0) }
        guard pid > 0 else { return errno }
        _ = waitpid(pid, nil, 0)
        return 0
    }

    /// Creates `name` beneath `directory` and writes to it until a write fails:
    /// whether the open succeeded, the errno the open or a write failed with, and
    /// the bytes written.
    package static func fill(_ name: String, beneath directory: FileDescriptor) -> (opened: Bool, errno: Int32, written: Int64) {
        let fd = openat(directory.rawValue, name, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { return (false, errno, 0) }
        var chunk = [UInt8](repeating: 0x61, count: 1 << 16)
        var written: Int64 = 0
        while true {
            let n = write(fd, &chunk, chunk.count)
            if n < 0 { return (true, errno, written) }
            written += Int64(n)
        }
    }

    /// malloc(3) of `bytes`: ENOMEM when refused; otherwise, once `report` has
    /// been told 0, every page is touched.
    package static func allocate(_ bytes: Int, report: (Int32) -> Void) {
        let memory = malloc(bytes)
        report(memory == nil ? ENOMEM : 0)
        if let memory { memset(memory, 1, bytes) }
    }

    private static func outcome(_ result: Int32) -> Int32 {
        result < 0 ? errno : 0
    }
}
#endif
