#if DEBUG
// The one file outside the system layer that calls the C library directly, and
// only in debug builds: each fault impersonates a subverted decoder, which would
// make the raw calls itself. Going through the typed wrappers would test the
// wrappers; these must meet the kernel's Landlock, seccomp and limits as they are.
#if canImport(Glibc)
import Glibc
#endif
import AirlockChild
import AirlockPolicy
import AirlockSystem

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

    /// A child started ahead of need burns AIRLOCK_TEST_WARM_SPIN_MS milliseconds of
    /// CPU before it waits for its drop, so a test can tell whether its CPU limit
    /// counts from its start or from the hand-over.
    static func spinWhileWaiting() {
        guard let text = getenv("AIRLOCK_TEST_WARM_SPIN_MS").map({ String(cString: $0) }), let milliseconds = Int(text) else { return }
        let start = clock()
        var sink: UInt64 = 0
        // clock() counts microseconds of this process's CPU time (CLOCKS_PER_SEC is a million on POSIX).
        while (clock() - start) / 1000 < milliseconds { sink &+= 1 }
        if sink == 0 { report("warm-spin", 0) }
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
