#if canImport(Glibc)
import Glibc
#endif

/// The calling process itself.
public enum CurrentProcess {
    /// getpid(2).
    public static var id: Int32 { getpid() }

    /// getppid(2): the parent now, which is not the one that started this process
    /// once that one has died and this process was reparented.
    public static var parentID: Int32 { getppid() }

    /// umask(2): the permission bits `mask` names are taken from every mode this
    /// process creates files and directories with.
    public static func setFileCreationMask(_ mask: mode_t) {
        _ = umask(mask)
    }

    /// SIGKILL to this process: it dies here, as abruptly as a crash or an
    /// operator's kill -9 would end it.
    public static func kill() -> Never {
        _ = Glibc.kill(getpid(), SIGKILL)
        // SIGKILL to oneself is delivered before kill(2) returns; this is never reached.
        abort()
    }

    /// SIGSTOP to this process: every thread stops until a SIGCONT, as a debugger,
    /// a frozen cgroup or a stalled host would stop it. Sent to the calling thread
    /// (pthread_kill, tgkill(2)), which stops before it returns; kill(2) would wake
    /// another thread to start the stop, and this one could run on meanwhile.
    public static func stop() {
        _ = pthread_kill(pthread_self(), SIGSTOP)
    }

    /// exit(3): flushes stdio and leaves with `status`.
    public static func exit(_ status: Int32) -> Never {
        Glibc.exit(status)
    }

    /// _exit(2): leaves with `status` at once, running no exit handler, no
    /// library destructor and no stdio flush; for a process that writes only
    /// through descriptors and has nothing buffered (a decoder child).
    public static func exitWithoutCleanup(_ status: Int32) -> Never {
        Glibc._exit(status)
    }

    /// execv(2): replaces this process with the program at `path`, given
    /// `arguments` (its name first) and this process's environment. Returns only
    /// when the exec failed.
    public static func replace(with path: String, arguments: [String]) -> SystemError {
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        execv(path, argv)
        return SystemError("execv", Array(path.utf8), Errno(rawValue: errno))
    }

    /// gethostname(2): the host's name as the kernel holds it (its UTS namespace's),
    /// with no resolver lookup, so it is the same in a unit without network; nil
    /// when it cannot be read or is not UTF-8.
    public static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(validating: bytes, as: UTF8.self)
    }

    /// getenv(3); nil when the variable is unset.
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// abort(3): dies by SIGABRT, as a crashing program does.
    public static func abort() -> Never {
        Glibc.abort()
    }

    /// setlocale(LC_CTYPE, `name`): how the C library classifies and converts
    /// characters from now on; false when the locale is not installed.
    @discardableResult
    public static func setCharacterLocale(_ name: String) -> Bool {
        setlocale(LC_CTYPE, name) != nil
    }
}
