#if canImport(Glibc)
import Glibc
#endif
import AirlockChild
import AirlockFormats
import AirlockPolicy
import AirlockSystem
import AirlockText

/// The decoder child's whole life: parse its arguments, confine itself, decode
/// the inherited drop into the inherited staging directory, and write one JSON
/// verdict to the inherited result pipe.
///
/// Arguments: `FORMAT [--inspect] --limit-...=N ... POLICY_KEY=VALUE ...`, or
/// `--probe --limit-...=N ...` to confine itself and report what it was granted.
/// Descriptors: 3 the drop (read-only), 4 the staging directory (absent with
/// `--inspect` and `--probe`), 5 the result pipe.
extension DecoderChild {
    public static func main(_ arguments: [String]) -> Int32 {
        guard var request = Request(arguments) else {
            printError("airlock-decoder: bad arguments (this program is started by airlock, not by hand)")
            return usageStatus
        }
        // Locale data and the magic database are read now, while files may still be opened.
        _ = setlocale(LC_CTYPE, "C.UTF-8")
        request.detector = ContentTypes.load(request.magicDatabase)
        // Each converter loads its gconv module now; confinement forbids it later.
        if !request.probe {
            switch LegacyNames.open(taking: &request.encodingArguments) {
            case .success(let names): request.legacyNames = names
            case .failure(let error):
                printError("airlock-decoder: cannot decode legacy names: \(error)")
                return 70
            }
        }
        let started = monotonicNanoseconds()
        let confinement: ConfinementReport
        do {
            confinement = try Confinement.apply(request.limits, staging: request.writesStaging ? Confinement.stagingDescriptor : nil)
        } catch {
            printError("airlock-decoder: cannot confine: \(error)")
            return 70
        }
        let confineMicroseconds = Int64((monotonicNanoseconds() - started) / 1000)
        #if DEBUG
        // Faults are for drops: the start-up probe of `airlock run` must not hang on one.
        if !request.probe { TestFaults.inject(request) }
        #endif
        var message: VerdictMessage
        if request.probe {
            let limits = request.limits
            message = VerdictMessage(.probe(VerdictMessage.Probe(
                confineMicroseconds: confineMicroseconds, addressSpaceBytes: limits.addressSpaceBytes, cpuSeconds: limits.cpuSeconds,
                openFiles: limits.openFiles, fileSizeBytes: limits.fileSizeBytes,
                confinement: limits.requiresConfinement ? "required" : "best-effort")))
        } else if request.limits.requiresConfinement && confinement.isRefused {
            message = unconfined(confinement)
        } else {
            message = decode(request)
        }
        return report(&message, confinement, program: "airlock-decoder")
    }

    static func decode(_ request: Request) -> VerdictMessage {
        let detector: ContentTypeDetector?
        switch request.detector {
        case .failure(let error): return ContentTypes.unavailable(error)
        case .success(let loaded): detector = loaded
        }
        let drop = Confinement.dropDescriptor
        let size: Int64
        do {
            size = try drop.status().size
        } catch {
            return failure(error, while: .readingDrop)
        }
        var scan = ArchiveScan(format: request.format, policy: request.policy, drop: drop, dropSize: size,
                               legacyNames: request.legacyNames!)
        if request.list { return ArchiveListing.run(scan) }
        scan.reportsProgress = request.progress
        let outcome: ScanOutcome
        var types: [(String, String)]?
        if request.inspect {
            (outcome, types) = ContentTypes.scan(&scan, into: DiscardingSink(), detector: detector)
        } else {
            let writer = StagingWriter(root: Confinement.stagingDescriptor, policy: request.policy)
            (outcome, types) = ContentTypes.scan(&scan, into: writer, detector: detector)
        }
        if let error = outcome.systemError { return failure(error, while: outcome.failedWhile) }
        let detected = types?.map { DetectedType(entry: $0.0, type: $0.1) }
        guard let violation = outcome.findings.worst else {
            return VerdictMessage(.accepted(VerdictMessage.Accepted(files: outcome.files, directories: outcome.directories,
                                                                    entries: Int64(outcome.entries), bytesWritten: outcome.bytesWritten)),
                                  types: detected)
        }
        return VerdictMessage(.rejected(VerdictMessage.Rejected(
            reason: violation.reason.rawValue, detail: violation.detail, entry: violation.entry.map { EscapedName($0).text },
            otherEntry: violation.other.map { EscapedName($0).text }, index: violation.index.map(Int64.init),
            entries: Int64(outcome.entries), bytesWritten: outcome.bytesWritten)), types: detected)
    }

    struct Request {
        var format: ArchiveFormat = .zip
        var inspect = false
        var probe = false
        var progress = false
        var limits = DecoderLimits(addressSpaceBytes: 0, cpuSeconds: 0, openFiles: 0, fileSizeBytes: 0)
        var policy = Policy()
        /// Where libmagic's database is; nil: no type detection.
        var magicDatabase: String?
        /// Loaded from `magicDatabase` before confinement.
        var detector: Result<ContentTypeDetector?, ContentTypeError> = .success(nil)
        /// The arguments naming legacy name encodings, and their converters, opened before confinement.
        var encodingArguments: [String] = []
        var legacyNames: LegacyNames?

        /// Lists the archive's entries from their headers instead of judging it.
        var list = false
        var writesStaging: Bool { !inspect && !probe && !list }

        init?(_ arguments: [String]) {
            guard let first = arguments.first else { return nil }
            if first == "--probe" {
                probe = true
            } else {
                guard let format = ArchiveFormat(rawValue: first) else { return nil }
                self.format = format
            }
            var rest = Array(arguments.dropFirst())
            if let index = rest.firstIndex(of: "--inspect") {
                inspect = true
                rest.remove(at: index)
            }
            if let index = rest.firstIndex(of: "--list") {
                list = true
                rest.remove(at: index)
            }
            if let index = rest.firstIndex(of: "--progress") {
                progress = true
                rest.remove(at: index)
            }
            magicDatabase = ContentTypes.takeDatabaseArgument(&rest)
            encodingArguments = rest.filter { $0.hasPrefix(LegacyNames.zipArgument) || $0.hasPrefix(LegacyNames.tarArgument) }
            rest.removeAll { $0.hasPrefix(LegacyNames.zipArgument) || $0.hasPrefix(LegacyNames.tarArgument) }
            guard let limits = DecoderLimits(taking: &rest) else { return nil }
            self.limits = limits
            let policyArguments = rest
            guard let policy = Policy(arguments: policyArguments) else { return nil }
            self.policy = policy
        }
    }
}

#if DEBUG
/// Test-only faults, compiled into debug builds only and selected by an
/// environment variable that the supervisor forwards only in debug builds. A
/// drop's bytes cannot select one. Each runs after confinement, as a subverted
/// decoder would.
enum TestFaults {
    static func inject(_ request: DecoderChild.Request) {
        guard let value = getenv("AIRLOCK_TEST_DECODER_FAULT").map({ String(cString: $0) }) else { return }
        switch value {
        case "abort": abort()
        case "hang": while true { sleep(60) }
        case "delay": sleep(2)
        case "drop-eio": DropFile.failEveryRead()
        case "escape-beside-staging":
            attempt(value) { openat(Confinement.stagingDescriptor.rawValue, "../escape-beside-staging", O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        case "escape-root":
            attempt(value) { open(stagingPath() + "/../../../escape-in-root", O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        case "escape-tmp":
            attempt(value) { open("/tmp/airlock-escape-\(getpid())", O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        case "escape-read-passwd":
            attempt(value) { open("/etc/passwd", O_RDONLY) }
        case "escape-tcp":
            attempt(value) {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else { return -1 }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(9).bigEndian
                address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
        case "escape-exec":
            attempt(value) {
                let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup("true"), nil]
                return execv("/bin/sh", argv)
            }
        case "escape-file-size":
            // Past RLIMIT_FSIZE: the kernel answers EFBIG, and the verdict is a quota one.
            let fd = openat(Confinement.stagingDescriptor.rawValue, "big", O_WRONLY | O_CREAT | O_EXCL, 0o600)
            var chunk = [UInt8](repeating: 0x61, count: 1 << 16)
            var written: Int64 = 0
            while fd >= 0 {
                let n = write(fd, &chunk, chunk.count)
                if n < 0 {
                    report(value, errno)
                    var message = DecoderChild.failure(SystemError("write", Array("big".utf8), Errno.current))
                    message.noteBytesWritten(written)
                    try? Confinement.resultDescriptor.writeAll(Array(message.jsonText.utf8))
                    exit(0)
                }
                written += Int64(n)
            }
            report(value, errno)
            abort()
        case "escape-allocate":
            let size = Int(request.limits.addressSpaceBytes)
            let memory = malloc(size)
            report(value, memory == nil ? ENOMEM : 0)
            if let memory { memset(memory, 1, size) }
            abort()
        default:
            ForgedStaging.inject(value, policy: request.policy)
        }
    }

    /// Runs one escape attempt, says on standard error how it ended, then dies:
    /// a decoder that tried to escape must not produce a verdict.
    private static func attempt(_ name: String, _ body: () -> Int32) {
        let result = body()
        report(name, result < 0 ? errno : 0)
        abort()
    }

    private static func report(_ name: String, _ error: Int32) {
        let outcome = error == 0 ? "SUCCEEDED" : "failed with \(Errno(rawValue: error).name)"
        DecoderChild.printError("airlock-decoder: test escape \(name): \(outcome)")
    }

    private static func stagingPath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/fd/4", &buffer, 4095)
        return length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/nonexistent"
    }
}
#endif
