import AirlockTestSupport
import Foundation
import Testing

/// What `airlock doctor --json` says the kernel grants decoders here.
///
/// A mechanism counts as offered unless doctor ran and said otherwise: when
/// doctor cannot run, the tests that depend on its answer run and fail on
/// `requireDoctor()`, rather than skip as if the kernel lacked the mechanism.
enum KernelConfinement {
    struct DoctorFailed: Error, CustomStringConvertible {
        let description: String
    }

    static let report: Result<DoctorDocument, DoctorFailed> = {
        do {
            // Decoded without #expect: trait conditions read this outside any test.
            let outcome = try airlock(["doctor", "--json"])
            guard let object = try? JSONDecoder().decode(DoctorDocument.self, from: Data(outcome.stdout.utf8)) else {
                return .failure(DoctorFailed(description: "doctor --json printed no findings (status \(outcome.status)): \(outcome.stdout) \(outcome.stderr)"))
            }
            return .success(object)
        } catch {
            return .failure(DoctorFailed(description: "doctor --json could not run: \(error)"))
        }
    }()
    static var landlock: Bool { offers { $0.landlock == true } }
    static var landlockNetwork: Bool { offers { $0.landlock == true && ($0.landlockABI ?? 0) >= 4 } }
    static var seccomp: Bool { offers { $0.seccomp == true } }
    /// Both in force for a decoder, as the unit's filter must keep them.
    static var landlockAndSeccomp: Bool { offers { $0.bothInForce } }

    private static func offers(_ rule: (DoctorDocument) -> Bool) -> Bool {
        guard case .success(let found) = report else { return true }
        return rule(found)
    }

    /// doctor's findings; fails the test when doctor could not give them.
    @discardableResult
    static func requireDoctor() throws -> DoctorDocument { try report.get() }
}

/// A test-only escape mode of the decoder: after confining itself it tries one
/// forbidden thing, says on standard error how that ended, and dies.
struct EscapeCase: CustomTestStringConvertible, Sendable {
    let mode: String
    /// Acceptable endings on standard error ("failed with EACCES"), or a signal in the detail.
    let errnos: [String]
    let signal: String?
    let reason: String
    var testDescription: String { mode }
}

@Suite("Confinement: a decoder that tries to escape gets nowhere")
struct ConfinementTests {
    static let landlockCases = [
        EscapeCase(mode: "escape-beside-staging", errnos: ["EACCES"], signal: nil, reason: "decoder-failed"),
        EscapeCase(mode: "escape-root", errnos: ["EACCES"], signal: nil, reason: "decoder-failed"),
        EscapeCase(mode: "escape-tmp", errnos: ["EACCES"], signal: nil, reason: "decoder-failed"),
        EscapeCase(mode: "escape-read-passwd", errnos: ["EACCES"], signal: nil, reason: "decoder-failed"),
    ]
    static let seccompCases = [
        EscapeCase(mode: "escape-tcp", errnos: ["EACCES", "EPERM"], signal: "SIGSYS", reason: "decoder-failed"),
        EscapeCase(mode: "escape-exec", errnos: ["EACCES", "EPERM"], signal: "SIGSYS", reason: "decoder-failed"),
        // The rule a child forked by a template adds to the part its template loaded.
        EscapeCase(mode: "escape-process", errnos: ["EAGAIN"], signal: "SIGSYS", reason: "decoder-failed"),
    ]
    static let limitCases = [
        EscapeCase(mode: "escape-file-size", errnos: ["EFBIG"], signal: nil, reason: "file-too-large"),
        EscapeCase(mode: "escape-allocate", errnos: ["ENOMEM"], signal: nil, reason: "decoder-failed"),
    ]

    /// One escape through `run --once`; its outcome, for the checks of a caller
    /// that chose how the child starts through `environment`.
    @discardableResult
    func attempt(_ item: EscapeCase, environment: [String: String] = [:]) throws -> Outcome {
        try KernelConfinement.requireDoctor()
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let tmpBefore = try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("airlock-escape") }
        try sandbox.drop(Samples.validZip, as: "\(item.mode).zip")
        let result = try sandbox.runOnce(environment: environment.merging(["AIRLOCK_TEST_DECODER_FAULT": item.mode]) { $1 })
        expectEqual(result.status, 0, "\(result.stderr)")
        let event = try #require(result.events.first)
        expectEqual(event.reason, item.reason, "\(event)")
        let detail = event.detail ?? ""
        let endedByErrno = item.errnos.contains { result.stderr.contains("test escape \(item.mode): failed with \($0)") }
        let endedBySignal = item.signal.map { detail.contains($0) } ?? false
        expect(endedByErrno || endedBySignal, "stderr: \(result.stderr) detail: \(detail)")
        expect(!result.stderr.contains("SUCCEEDED"), "\(result.stderr)")
        try sandbox.expectInvariants()
        expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("escape-in-root").path))
        expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("state/escape-beside-staging").path))
        let tmpAfter = try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("airlock-escape") }
        expectEqual(tmpAfter, tmpBefore)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), Samples.validZip)
        return result
    }

    @Test("writing outside staging or reading any other file fails", .enabled(if: KernelConfinement.landlock, "skipped: the kernel offers no Landlock (airlock doctor)"),
          arguments: landlockCases)
    func landlockEscapes(_ item: EscapeCase) throws {
        try attempt(item)
    }

    @Test("opening a TCP connection, executing a program or starting a process fails", .enabled(if: KernelConfinement.seccomp || KernelConfinement.landlockNetwork, "skipped: the kernel offers neither seccomp nor Landlock's network rules"),
          arguments: seccompCases)
    func seccompEscapes(_ item: EscapeCase) throws {
        try attempt(item)
    }

    @Test("writing past the file-size limit and allocating past the address-space limit fail", arguments: limitCases)
    func limitEscapes(_ item: EscapeCase) throws {
        try attempt(item)
    }

    @Test("the supervisor may write only beneath its root, and an absolute metrics directory", .needsLeases,
          .enabled(if: KernelConfinement.landlock, "skipped: the kernel offers no Landlock (airlock doctor)"))
    func supervisorWrites() throws {
        try KernelConfinement.requireDoctor()
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let metrics = sandbox.logs.appendingPathComponent("metrics")
        try FileManager.default.createDirectory(at: metrics, withIntermediateDirectories: false)
        try sandbox.configure("metrics", ["path": metrics.appendingPathComponent("airlock.prom").path, "interval_seconds": 1])
        let daemon = try RunningDaemon(sandbox)
        expect(daemon.stderr.contains("the supervisor may write only beneath \(sandbox.root.path) and the metrics directory"),
                "\(daemon.stderr)")
        try sandbox.drop(Samples.validZip, as: "fine.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.kind, .accepted)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        expect(FileManager.default.fileExists(atPath: metrics.appendingPathComponent("airlock.prom").path))
        try sandbox.expectInvariants()
    }

    // Landlock confines only the threads started after the ruleset: `run --once`
    // (which starts its decoder template and output threads early) must still be
    // one thread when it applies it, or the log says which writes stay unconfined.
    @Test("run --once applies the supervisor's ruleset while it is one thread, so that it covers every thread",
          .enabled(if: KernelConfinement.landlock, "skipped: the kernel offers no Landlock (airlock doctor)"))
    func supervisorWritesOnce() throws {
        try KernelConfinement.requireDoctor()
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "fine.zip")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        expect(result.stderr.contains("the supervisor may write only beneath \(sandbox.root.path) (Landlock ABI"), "\(result.stderr)")
        expect(!result.stderr.contains("are outside it"), "\(result.stderr)")
        expectEqual(result.events.map(\.kind), [.accepted])
        try sandbox.expectInvariants()
    }

    @Test("a decoder that finds another thread running when it confines itself decodes nothing: the drop is deferred, then accepted",
          .enabled(if: KernelConfinement.landlock || KernelConfinement.seccomp, "skipped: the kernel offers neither Landlock nor seccomp"))
    func threadBeforeConfinementDefers() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "fine.zip")
        let faulty = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": "thread-before-confinement"])
        expectEqual(faulty.status, 75, "\(faulty.stderr)")
        let event = try #require(faulty.events.first, "\(faulty.stdout)")
        expectEqual(event.kind, .deferred, "\(event)")
        expectEqual(event.detail?.contains("1 other threads were running when this decoder confined itself"), true, "\(event)")
        try sandbox.expectOnlyClaimed(1)

        let healthy = try sandbox.runOnce()
        expectEqual(healthy.status, 0, "\(healthy.stderr)")
        expectEqual(healthy.events.filter { $0.kind != .deferred }.map(\.kind), [.accepted], "\(healthy.stdout)")
        try sandbox.expectInvariants()
    }

    @Test("airlock doctor reports the Landlock ABI, seccomp and the limits")
    func doctor() throws {
        let text = try airlock(["doctor"])
        expectEqual(text.status, 0, "\(text.stderr)")
        for label in ["landlock:", "seccomp:", "limits:", "address space 1073741824 bytes", "CPU 60 s", "open files 64"] {
            expect(text.stdout.contains(label), "\(text.stdout)")
        }
        let report = try KernelConfinement.requireDoctor()
        expect(report.landlockABI != nil)
        expectEqual(report.limitFileSizeBytes, Int64(20 * 1024 * 1024 + 1))
    }

    @Test("a decoder whose supervisor is gone before it could tie its life to it kills itself before reading the drop, which is deferred")
    func orphanedDecoderDies() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "orphan.zip")
        // pid 1 is never the supervisor: the child sees itself orphaned, as after a SIGKILL of its parent.
        let result = try sandbox.runOnce(environment: ["AIRLOCK_TEST_SUPERVISOR_PID": "1"])
        expectEqual(result.status, 75, "\(result.stderr)")
        let event = try #require(result.events.first)
        // It died before it took its drop: no verdict on the drop, which stays claimed.
        expectEqual(event.kind, .deferred, "\(event)")
        expect((event.detail ?? "").contains("SIGKILL"), "\(event)")
        try sandbox.expectOnlyClaimed(1)
        // With a supervisor the child can tie itself to, the drop lands.
        let again = try sandbox.runOnce()
        expectEqual(again.status, 0, "\(again.stderr)")
        expectEqual(again.events.first?.kind, .accepted)
        try sandbox.expectInvariants()
    }
}
