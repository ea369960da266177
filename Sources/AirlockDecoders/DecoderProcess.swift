import AirlockChild
import AirlockConfiguration
import AirlockPolicy
import AirlockSystem
import Foundation

/// Starts the decoder child for one drop and collects its verdict.
///
/// The child is `airlock-decoder`, installed beside `airlock`. It inherits the drop
/// (read-only) as descriptor 3, the staging directory as 4 and the result pipe as
/// 5, nothing else; signal dispositions and mask are reset; the environment is
/// empty. Past the wall-clock limit, counted from when it has its drop, it is
/// killed. With `children`, the child is forked by the program's template
/// (`TemplatePool`) and receives the same descriptors and arguments.
package struct DecoderProcess: Sendable {
    package let executable: String
    let timeoutSeconds: Int64
    var children: RunningDecoders?

    package init(executable: String, timeoutSeconds: Int64, children: RunningDecoders? = nil) {
        self.executable = executable
        self.timeoutSeconds = timeoutSeconds
        self.children = children
    }

    package struct Run {
        package var termination: Termination
        let output: [UInt8]
        /// `output` decoded as the child's verdict, once for every reader of it.
        package let message: Result<VerdictMessage, VerdictMessage.ReadFailure>
        package var timedOut: Bool
        /// Killed because the daemon is stopping: no verdict on the drop.
        package var abandoned = false
        /// The child's peak resident set size.
        package var maxRSSKiB: Int64 = 0
        /// The verdict version the child named when it said it had taken the drop
        /// (`TakenNotice`); nil: it never took it, and nothing it did is a verdict.
        package var taken: Int64?

        init(termination: Termination, output: [UInt8], timedOut: Bool, abandoned: Bool = false, maxRSSKiB: Int64 = 0,
             taken: Int64? = nil) {
            self.termination = termination
            self.output = output
            message = VerdictMessage.read(output)
            self.timedOut = timedOut
            self.abandoned = abandoned
            self.maxRSSKiB = maxRSSKiB
            self.taken = taken
        }

        /// Whether the child and this supervisor come from builds that speak
        /// different versions: a request it refused, a taken notice or a verdict
        /// of another version.
        var speaksAnotherVersion: Bool {
            if termination == .exited(DecoderRequest.refusedStatus) && taken == nil { return true }
            if let taken, taken != VerdictMessage.currentVersion { return true }
            if case .failure(.refused(.unknownVersion)) = message { return true }
            return false
        }
    }

    /// The most a child may write to its result pipe: its verdict lists the
    /// types and content classes of up to `policy.max_entries` files by escaped
    /// name (at the default 1,000 entries of paths up to 1,024 bytes, at worst
    /// about 9 MiB); a child writing more is misbehaving.
    static let maxOutputBytes = 16 << 20

    /// - Parameters:
    ///   - progress: called with (bytes of the drop read, drop size) as the
    ///     child reports them; the child reports only when given `--progress`.
    ///   - written: called with the staging path of each large file the child
    ///     says it has closed (`WrittenFileNotice`), while it decodes.
    ///   - writing: called with the bytes the child says it has written to
    ///     staging since its last such notice (`WritingNotice`), while it decodes.
    package func run(_ request: DecoderRequest, drop: FileDescriptor, staging: FileDescriptor?,
             progress: ((Int64, Int64) -> Void)? = nil, written: (([UInt8]) -> Void)? = nil,
             writing: ((Int64) -> Void)? = nil) throws(SystemError) -> Run {
        let arguments = request.encoded
        let pipe = try makePipe()
        let read = OwnedDescriptor(pipe.read), write = OwnedDescriptor(pipe.write)
        let child = try launch(arguments: arguments, startUp: Self.startUpArguments(request), drop: drop, staging: staging,
                               result: write.descriptor)
        // Our copy of the child's end goes as soon as the child has its own, so the
        // pipe reports EOF when the child exits.
        write.close()
        defer { child.close() }
        _ = children?.started(child)
        let collected = Result { () throws(SystemError) in
            try collect(child, from: read.descriptor, progress: progress, written: written, writing: writing)
        }
        // Forgotten before the pidfd closes, so an abandoning daemon never signals it after.
        let abandoned = children?.finished(child) == true
        var run = try collected.get()
        if abandoned { run.abandoned = true }
        // Decoder programs of another build are on disk (a package upgrade under a
        // running daemon): the templates started from the old ones go, so that the
        // next drop's child comes from what is installed now.
        if run.speaksAnotherVersion { children?.replaceStarted() }
        return run
    }

    /// A child started by `start`, whose verdict `finish` collects.
    package struct Pending: Sendable {
        fileprivate let process: DecoderProcess
        fileprivate let child: ChildProcess
        /// The result pipe's read end: closed by `finish`, or when the last copy goes.
        fileprivate let pipe: SharedDescriptor

        /// Waits for the child (killed past the wall-clock limit) and its verdict;
        /// closes what `start` opened, whatever happens.
        package func finish() throws(SystemError) -> Run {
            defer {
                pipe.close()
                child.close()
            }
            return try process.collect(child, from: pipe.descriptor, progress: nil, written: nil, writing: nil)
        }
    }

    /// Starts a child that needs no staging, no template and no tracking (the
    /// confinement probe), for `Pending.finish` to collect later: what the caller
    /// does in between overlaps the child's start. `drop` may be closed once this returns.
    package func start(_ request: DecoderRequest, drop: FileDescriptor) throws(SystemError) -> Pending {
        let arguments = request.encoded
        let pipe = try makePipe()
        let read = OwnedDescriptor(pipe.read), write = OwnedDescriptor(pipe.write)
        let child = try ChildProcess.spawn(executable, arguments: arguments, environment: Self.childEnvironment(),
                                           descriptors: Self.childDescriptors(drop: drop, staging: nil, result: write.descriptor))
        // Ours goes once the child has its own, so the pipe reports EOF when it exits.
        write.close()
        return Pending(process: self, child: child, pipe: SharedDescriptor(read))
    }

    /// The drop's child: with `children`, one forked by the program's template;
    /// otherwise, or when no template can fork one now, one started here with its
    /// descriptors (`posix_spawn`).
    private func launch(arguments: [String], startUp: [String], drop: FileDescriptor, staging: FileDescriptor?,
                        result: FileDescriptor) throws(SystemError) -> ChildProcess {
        if let staging, let children,
           let forked = children.templates.fork(executable, startUp: startUp, environment: Self.childEnvironment(),
                                                arguments: arguments, descriptors: [drop, staging, result]) {
            return forked
        }
        if StartFault.spawnRefused.fails() { throw SystemError("posix_spawn", Array(executable.utf8), .wouldBlock) }
        return try ChildProcess.spawn(executable, arguments: arguments, environment: Self.childEnvironment(),
                                      descriptors: Self.childDescriptors(drop: drop, staging: staging, result: result))
    }

    /// What a template loads for every child, from a drop's request: the magic database.
    package static func startUpArguments(_ request: DecoderRequest) -> [String] {
        request.magicDatabase.map { [ContentTypes.databaseArgument + $0] } ?? []
    }

    /// What the child finds at each descriptor: /dev/null for standard input and
    /// output, the drop, the staging directory (or /dev/null) and the result pipe.
    private static func childDescriptors(drop: FileDescriptor, staging: FileDescriptor?,
                                         result: FileDescriptor) -> [ChildDescriptor] {
        [.nullInput(0), .nullOutput(1),
         .inherit(drop, as: Confinement.dropDescriptor.rawValue),
         staging.map { .inherit($0, as: Confinement.stagingDescriptor.rawValue) } ?? .nullInput(Confinement.stagingDescriptor.rawValue),
         .inherit(result, as: Confinement.resultDescriptor.rawValue)]
    }

    /// The child's whole environment.
    package static func childEnvironment() -> [String] {
        // Swift's crash backtracer would exec swift-backtrace, which the child's
        // seccomp filter kills as SIGSYS and which has no business in a confined
        // process: a crash must show as the signal that caused it.
        // TZ set: otherwise glibc re-reads /etc/localtime on every time conversion
        // (libarchive converts each ZIP entry's DOS time), which Landlock refuses,
        // so it would try again for every entry.
        var environment: [String] = ["SWIFT_BACKTRACE=enable=no", "TZ=UTC0", "\(Confinement.supervisorVariable)=\(CurrentProcess.id)"]
        #if DEBUG
        // Test-only knobs (fault injection, progress interval), AIRLOCK_TEST_*:
        // forwarded by debug builds only; release builds have neither side.
        for (key, value) in ProcessInfo.processInfo.environment where key.hasPrefix("AIRLOCK_TEST_") {
            environment.append(key + "=" + value)
        }
        #endif
        return environment
    }

    private func collect(_ child: ChildProcess, from pipe: FileDescriptor, progress: ((Int64, Int64) -> Void)?,
                         written: (([UInt8]) -> Void)?, writing: ((Int64) -> Void)?) throws(SystemError) -> Run {
        let deadline = monotonicNanoseconds() + UInt64(timeoutSeconds) * 1_000_000_000
        var output: [UInt8] = []
        var timedOut = false
        var taken: Int64?
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
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
                child.signal(.kill)
                break reading
            }
            output += chunk[0..<n]
            // Notices come before the verdict; once the output starts with
            // anything else, the rest is the verdict and is not looked at again.
            if Self.mayStartWithNotice(output) {
                output = Self.takeNotices(output, progress: progress, written: written, taken: { taken = taken ?? $0 }, writing: writing)
            }
        }
        if timedOut { child.signal(.kill) }
        let (termination, maxRSS) = try child.wait()
        return Run(termination: termination, output: output, timedOut: timedOut, maxRSSKiB: maxRSS, taken: taken)
    }
}

extension DecoderProcess {
    /// The decoder child program for `format`, found in `directory`.
    package init(for format: DropFormat, in directory: String, timeoutSeconds: Int64, children: RunningDecoders? = nil) {
        self.init(executable: directory + "/" + format.program, timeoutSeconds: timeoutSeconds, children: children)
    }

    static let progressPrefix = Array(#"{"progress":"#.utf8)

    /// How each notice line a child may send ahead of its verdict begins.
    static let noticePrefixes = [progressPrefix, WrittenFileNotice.prefix, TakenNotice.prefix, WritingNotice.prefix]

    /// Whether `output` starts with a notice, or with too few bytes to tell.
    static func mayStartWithNotice(_ output: [UInt8]) -> Bool {
        noticePrefixes.contains { prefix in
            output.count < prefix.count ? prefix.starts(with: output) : output.starts(with: prefix)
        }
    }

    /// Removes complete notice lines from the front of `output`: each
    /// `{"progress":N,"total":M}` goes to `progress`, each `WrittenFileNotice` to
    /// `written`, each `WritingNotice` to `writing`, a `TakenNotice` to `taken`;
    /// what remains is the verdict (or its beginning).
    static func takeNotices(_ output: [UInt8], progress: ((Int64, Int64) -> Void)?,
                            written: (([UInt8]) -> Void)?, taken: ((Int64) -> Void)? = nil, writing: ((Int64) -> Void)? = nil) -> [UInt8] {
        var rest = output[...]
        while noticePrefixes.contains(where: { rest.starts(with: $0) }),
              let newline = rest.firstIndex(of: 0x0A) {
            let line = rest[rest.startIndex..<newline]
            if line.starts(with: TakenNotice.prefix) {
                if let version = TakenNotice.version(in: line) { taken?(version) }
            } else if line.starts(with: progressPrefix) {
                let numbers = String(decoding: line, as: UTF8.self).split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
                if numbers.count == 2 { progress?(numbers[0], numbers[1]) }
            } else if line.starts(with: WritingNotice.prefix) {
                if let bytes = WritingNotice.bytes(in: line) { writing?(bytes) }
            } else if let path = WrittenFileNotice.path(in: line) {
                written?(path)
            }
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
        switch Installation.current {
        case .buildTree(let directory): return directory
        case .installed(let prefix): return prefix + "/libexec/airlock"
        case .unknown: return nil
        }
    }
}
