import AirlockChild
import Foundation
import AirlockSystem
#if canImport(Glibc)
import Glibc
#endif

/// Starts the decoder child for one drop and collects its verdict.
///
/// The child is `airlock-decoder`, installed beside `airlock`. It inherits the drop
/// (read-only) as descriptor 3, the staging directory as 4 and the result pipe as
/// 5, nothing else; signal dispositions and mask are reset; the environment is
/// empty. Past the wall-clock limit it is killed.
struct DecoderProcess {
    let executable: String
    let timeoutSeconds: Int64
    var children: DecoderChildren?

    struct Run {
        var termination: Termination
        var output: [UInt8]
        var timedOut: Bool
        /// Killed because the daemon is stopping: no verdict on the drop.
        var abandoned = false
        /// The child's peak resident set size.
        var maxRSSKiB: Int64 = 0
    }

    static let maxOutputBytes = 64 * 1024

    /// - Parameter progress: called with (bytes of the drop read, drop size) as the
    ///   child reports them; the child reports only when given `--progress`.
    func run(arguments: [String], drop: FileDescriptor, staging: FileDescriptor?,
             progress: ((Int64, Int64) -> Void)? = nil) throws(SystemError) -> Run {
        // Lift every inherited descriptor above the target numbers first, so no
        // dup2 in the child has the same source and target.
        func lifted(_ fd: FileDescriptor) throws(SystemError) -> FileDescriptor {
            FileDescriptor(rawValue: try retrying("fcntl(F_DUPFD_CLOEXEC)") { fcntl(fd.rawValue, F_DUPFD_CLOEXEC, 10) })
        }
        let pipe = try makePipe()
        var toClose = [pipe.write]
        defer { toClose.forEach { $0.close() } }
        defer { pipe.read.close() }
        let childDrop = try lifted(drop)
        toClose.append(childDrop)
        let childStaging = try staging.map { (fd) throws(SystemError) in try lifted(fd) }
        if let childStaging { toClose.append(childStaging) }
        let childResult = try lifted(pipe.write)
        toClose.append(childResult)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, childDrop.rawValue, Confinement.dropDescriptor.rawValue)
        if let childStaging {
            posix_spawn_file_actions_adddup2(&actions, childStaging.rawValue, Confinement.stagingDescriptor.rawValue)
        } else {
            posix_spawn_file_actions_addopen(&actions, Confinement.stagingDescriptor.rawValue, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, childResult.rawValue, Confinement.resultDescriptor.rawValue)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // Swift's crash backtracer would exec swift-backtrace, which the child's
        // seccomp filter kills as SIGSYS and which has no business in a confined
        // process: a crash must show as the signal that caused it.
        // TZ set: otherwise glibc re-reads /etc/localtime on every time conversion
        // (libarchive converts each ZIP entry's DOS time), which Landlock refuses,
        // so it would try again for every entry.
        var environment: [String] = ["SWIFT_BACKTRACE=enable=no", "TZ=UTC0", "\(Confinement.supervisorVariable)=\(getpid())"]
        #if DEBUG
        // Test-only knobs (fault injection, progress interval), AIRLOCK_TEST_*:
        // forwarded by debug builds only; release builds have neither side.
        for (key, value) in ProcessInfo.processInfo.environment where key.hasPrefix("AIRLOCK_TEST_") {
            environment.append(key + "=" + value)
        }
        #endif
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw SystemError("posix_spawn", Array(executable.utf8), Errno(rawValue: spawned)) }
        // Our copies of the child's ends go now, so the pipe reports EOF when the child exits.
        toClose.forEach { $0.close() }
        toClose.removeAll()
        _ = children?.started(pid)
        var run = try collect(pid: pid, from: pipe.read, progress: progress)
        if children?.finished(pid) == true { run.abandoned = true }
        return run
    }

    private func collect(pid: pid_t, from pipe: FileDescriptor, progress: ((Int64, Int64) -> Void)?) throws(SystemError) -> Run {
        let deadline = monotonicNanoseconds() + UInt64(timeoutSeconds) * 1_000_000_000
        var output: [UInt8] = []
        var timedOut = false
        var chunk = [UInt8](repeating: 0, count: 4096)
        reading: while true {
            let now = monotonicNanoseconds()
            guard now < deadline else { timedOut = true; break }
            let wait = Int32(min((deadline - now) / 1_000_000 + 1, 1000))
            guard try waitReadable(pipe, milliseconds: wait) else { continue }
            let n = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in try pipe.read(into: buffer) }
            }.get()
            if n == 0 { break reading }
            guard output.count + n <= DecoderProcess.maxOutputBytes else {
                // A child that floods the pipe is misbehaving: stop it.
                timedOut = false
                kill(pid, SIGKILL)
                break reading
            }
            output += chunk[0..<n]
            output = Self.takeProgressLines(output, progress)
        }
        if timedOut { kill(pid, SIGKILL) }
        let (termination, maxRSS) = try waitForChild(pid)
        return Run(termination: termination, output: output, timedOut: timedOut, maxRSSKiB: maxRSS)
    }
}

extension DecoderProcess {
    /// The decoder child program for `format`, found in `directory`.
    init(for format: DropFormat, in directory: String, timeoutSeconds: Int64, children: DecoderChildren? = nil) {
        self.init(executable: directory + "/" + format.program, timeoutSeconds: timeoutSeconds, children: children)
    }

    static let progressPrefix = Array(#"{"progress":"#.utf8)

    /// Removes complete `{"progress":N,"total":M}` lines from the front of `output`,
    /// handing each to `progress`; what remains is the verdict (or its beginning).
    static func takeProgressLines(_ output: [UInt8], _ progress: ((Int64, Int64) -> Void)?) -> [UInt8] {
        var rest = output[...]
        while rest.starts(with: progressPrefix), let newline = rest.firstIndex(of: 0x0A) {
            let line = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
            if numbers.count == 2 { progress?(numbers[0], numbers[1]) }
            rest = rest[(newline + 1)...]
        }
        return Array(rest)
    }
}

/// Where the decoder child programs live: beside the running executable.
public enum DecoderLocation {
    /// Where the decoder programs are: beside the running executable (a build
    /// tree), or in `libexec/airlock` beside its `bin` (an installation:
    /// PREFIX/bin/airlock and PREFIX/libexec/airlock/airlock-decoder), found
    /// from the executable's own path, never from PATH or the working directory.
    public static func directory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard length > 0 else { return nil }
        let me = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = me.lastIndex(of: "/") else { return nil }
        let directory = String(me[..<slash])
        var candidates = [directory]
        if let parent = directory.lastIndex(of: "/") { candidates.append(String(directory[..<parent]) + "/libexec/airlock") }
        return candidates.first { candidate in DropFormat.programs.allSatisfy { access(candidate + "/" + $0, X_OK) == 0 } }
    }
}
