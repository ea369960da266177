import AirlockTestSupport
import Foundation
import Testing

/// `run --once` records what confinement its decoders get: from the decoder
/// children's own reports when a drop reached one, and otherwise from a probe
/// child started for the purpose, so that every run logs and records it. The
/// decoders started are counted with strace (execve of airlock-decoder), each
/// drop's child started by posix_spawn (templates off), so that a probe would be
/// one more.
@Suite("run --once: the decoders' confinement comes from their own reports, and from a probe only when no drop reached one")
struct ConfinementProbeTests {
    static let strace = "/usr/bin/strace"

    /// `run --once` under strace on `sandbox`: its outcome and how many times airlock-decoder was executed.
    static func tracedRun(_ sandbox: Sandbox) throws -> (Outcome, decoders: Int) {
        let trace = sandbox.logs.appendingPathComponent("execve.trace")
        let result = try airlock(["run", "--once", "--root", sandbox.root.path], environment: ["AIRLOCK_TEST_DECODER_TEMPLATES": "off"],
                                 under: [strace, "-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-o", trace.path])
        let lines = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n")
        return (result, lines.filter { $0.contains("execve(\"") && $0.contains("/airlock-decoder\"") && !$0.contains("= -1") }.count)
    }

    /// What `state/decoder-confinement` holds, beside what `doctor` finds now.
    static func recordedAndFound(_ sandbox: Sandbox) throws -> (recorded: DoctorDocument, found: DoctorDocument) {
        let recorded = try JSONDecoder().decode(DoctorDocument.self,
                                                from: Data(contentsOf: sandbox.root.appendingPathComponent("state/decoder-confinement")))
        let doctor = try airlock(["doctor", "--json", "--root", sandbox.root.path])
        let found = try #require(doctor.document(DoctorDocument.self), "doctor printed no JSON: \(doctor.stderr)")
        return (recorded, found)
    }

    @Test("drops decoded: one decoder per drop and no probe; the children's report is recorded",
          .enabled(if: FileManager.default.isExecutableFile(atPath: strace), "needs strace (package strace)"))
    func childrenReport() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "a.zip")
        try sandbox.drop(Samples.validZip, as: "b.zip")
        let (result, decoders) = try Self.tracedRun(sandbox)
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.map(\.kind), [.accepted, .accepted], "\(result.stdout)")
        expectEqual(decoders, 2, "one decoder per drop, and no probe: \(decoders)")
        let (recorded, found) = try Self.recordedAndFound(sandbox)
        expect(recorded.landlockState == found.landlockState && recorded.seccompState == found.seccompState, "\(recorded) \(found)")
        try sandbox.expectInvariants()
    }

    @Test("no drop, or none that reached a decoder: one probe, recorded",
          .enabled(if: FileManager.default.isExecutableFile(atPath: strace), "needs strace (package strace)"),
          arguments: [false, true])
    func probeWithoutChildren(_ tooLargeDrop: Bool) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: tooLargeDrop ? ["max_drop_bytes": 16] : [:])
        if tooLargeDrop { try sandbox.drop(Samples.validZip, as: "big.zip") }
        let (result, decoders) = try Self.tracedRun(sandbox)
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.map(\.reason), (tooLargeDrop ? ["drop-too-large"] : []), "\(result.stdout)")
        expectEqual(decoders, 1, "the probe alone: \(decoders)")
        let (recorded, found) = try Self.recordedAndFound(sandbox)
        expect(recorded.landlockState == found.landlockState && recorded.seccompState == found.seccompState, "\(recorded) \(found)")
        try sandbox.expectInvariants()
    }
}
