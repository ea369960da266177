#if DEBUG
// Each fault impersonates a subverted decoder: its raw calls come from the system
// layer's debug-only EscapeAttempts, one plain system call each, so they meet the
// kernel's Landlock, seccomp and limits as they are.
import AirlockChild
import AirlockPolicy
import AirlockSystem

/// Test-only faults, compiled into debug builds only and selected by an
/// environment variable that the supervisor forwards only in debug builds. A
/// drop's bytes cannot select one. Each but `beforeConfinement` runs after
/// confinement, as a subverted decoder would.
enum TestFaults {
    /// The one fault that runs before confinement: a thread started then, which
    /// Landlock and seccomp would not bind, so the decoder must refuse to decode.
    static func beforeConfinement() {
        guard CurrentProcess.environment("AIRLOCK_TEST_DECODER_FAULT") == "thread-before-confinement" else { return }
        try? SystemThread.start(stackSize: 64 << 10) {
            while true { WallClock.sleep(milliseconds: 60_000) }
        }
    }

    static func inject(_ request: ArchiveDecoderProgram.Request) {
        guard let value = CurrentProcess.environment("AIRLOCK_TEST_DECODER_FAULT") else { return }
        switch value {
        case "abort": CurrentProcess.abort()
        case "hang": while true { WallClock.sleep(milliseconds: 60_000) }
        case "delay": WallClock.sleep(milliseconds: 2_000)
        case "drop-eio": DropFile.failEveryRead()
        case "escape-beside-staging":
            attempt(value) { EscapeAttempts.create("../escape-beside-staging", beneath: Confinement.stagingDescriptor) }
        case "escape-root":
            attempt(value) { EscapeAttempts.create(path: stagingPath() + "/../../../escape-in-root") }
        case "escape-tmp":
            attempt(value) { EscapeAttempts.create(path: "/tmp/airlock-escape-\(CurrentProcess.id)") }
        case "escape-read-passwd":
            attempt(value) { EscapeAttempts.read(path: "/etc/passwd") }
        case "escape-tcp":
            attempt(value) { EscapeAttempts.connectLoopback(port: 9) }
        case "escape-exec":
            attempt(value) { EscapeAttempts.execute("/bin/sh", ["/bin/sh", "-c", "true"]) }
        case "escape-process":
            attempt(value) { EscapeAttempts.startProcess() }
        case "escape-file-size":
            fileSize(value)
        case "escape-allocate":
            EscapeAttempts.allocate(Int(request.limits.addressSpaceBytes)) { report(value, $0) }
            CurrentProcess.abort()
        default:
            ForgedStaging.inject(value, policy: request.policy)
        }
    }

    /// Past RLIMIT_FSIZE the kernel answers EFBIG, and the verdict is a quota one.
    private static func fileSize(_ name: String) -> Never {
        let (opened, error, written) = EscapeAttempts.fill("big", beneath: Confinement.stagingDescriptor)
        report(name, error)
        guard opened else { CurrentProcess.abort() }
        var message = DecoderProgram.failure(SystemError("write", Array("big".utf8), Errno(rawValue: error)))
        message.noteBytesWritten(written)
        try? Confinement.resultDescriptor.writeAll(Array(message.jsonText.utf8))
        CurrentProcess.exit(0)
    }

    /// Runs one escape attempt, says on standard error how it ended, then dies:
    /// a decoder that tried to escape must not produce a verdict.
    private static func attempt(_ name: String, _ body: () -> Int32) {
        report(name, body())
        CurrentProcess.abort()
    }

    private static func report(_ name: String, _ error: Int32) {
        let outcome = error == 0 ? "SUCCEEDED" : "failed with \(Errno(rawValue: error).name)"
        DecoderProgram.printError("airlock-decoder: test escape \(name): \(outcome)")
    }

    private static func stagingPath() -> String {
        guard let target = try? PathQueries.linkTarget("/proc/self/fd/\(Confinement.stagingDescriptor.rawValue)") else { return "/nonexistent" }
        return String(decoding: target, as: UTF8.self)
    }
}
#endif
