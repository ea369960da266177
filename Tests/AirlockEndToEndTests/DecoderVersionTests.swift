import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The supervisor and the decoder programs on disk can come from different
/// builds (a package upgrade under a running daemon). A decoder that reads
/// another request version refuses before it takes the drop: the drop is
/// deferred, never judged, and the templates are restarted from what is on
/// disk; once a matching decoder is back, the drop lands, once.
@Suite("Decoder versions: a decoder of another version on disk defers drops and restarts the templates", .needsLeases, .serialized)
struct DecoderVersionTests {
    /// airlock and its decoders copied into `directory`, as an installation has them side by side.
    static func install(into directory: URL) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let built = URL(fileURLWithPath: Binary.airlock).deletingLastPathComponent()
        for program in ["airlock", "airlock-decoder", "airlock-keyed-decoder"] {
            try FileManager.default.copyItem(at: built.appendingPathComponent(program), to: directory.appendingPathComponent(program))
        }
        return directory.appendingPathComponent("airlock").path
    }

    /// Puts over `directory/airlock-decoder`, by rename as a package manager
    /// does, a decoder that reads request version `version`: the real program
    /// (kept as `airlock-decoder.real`) told so by a debug build's test switch.
    static func replaceDecoder(in directory: URL, readingVersion version: Int) throws {
        let real = directory.appendingPathComponent("airlock-decoder.real")
        if !FileManager.default.fileExists(atPath: real.path) {
            try FileManager.default.copyItem(at: directory.appendingPathComponent("airlock-decoder"), to: real)
        }
        let script = "#!/bin/sh\nAIRLOCK_TEST_CLAIM_REQUEST_VERSION=\(version) exec \"\(real.path)\" \"$@\"\n"
        let temporary = directory.appendingPathComponent(".airlock-decoder.new")
        try Data(script.utf8).write(to: temporary)
        chmod(temporary.path, 0o755)
        expectEqual(rename(temporary.path, directory.appendingPathComponent("airlock-decoder").path), 0)
    }

    /// Puts the real decoder back, by rename.
    static func restoreDecoder(in directory: URL) throws {
        let temporary = directory.appendingPathComponent(".airlock-decoder.new")
        try FileManager.default.copyItem(at: directory.appendingPathComponent("airlock-decoder.real"), to: temporary)
        expectEqual(rename(temporary.path, directory.appendingPathComponent("airlock-decoder").path), 0)
    }

    @Test("a decoder of a newer, then an older request version under a running daemon: deferred, templates restarted, then accepted once",
          arguments: [5, 3])
    func versionMismatchDefers(_ version: Int) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let installed = sandbox.logs.appendingPathComponent("bin")
        let airlock = try Self.install(into: installed)
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_TEMPLATE_TRACE": "1"], executable: airlock)
        try sandbox.drop(Samples.validZip, as: "before.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.kind, .accepted)

        try Self.replaceDecoder(in: installed, readingVersion: version)
        // A reload ends the templates, so the next drop's child comes from what is on disk now.
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 10) { daemon.stderr.contains("configuration reloaded") })
        try sandbox.drop(Samples.validZip, as: "during.zip")
        expect(waitFor(seconds: 30) {
            daemon.events.filter { $0.kind == .deferred && $0.drop == "during.zip" }.count >= 2
        }, "\(daemon.stderr.suffix(3000))")
        let deferred = daemon.events.filter { $0.kind == .deferred }
        for event in deferred {
            expectEqual(event.detail?.contains("speaks another version"), true, "\(event)")
        }
        expect(daemon.stderr.contains("the request is version 4; this decoder reads version \(version)"))
        // Each attempt met a template started afresh from the program on disk.
        let templates = templatesTraced(daemon.stderr)
        expectEqual(Set(templates.suffix(2)).count, 2, "\(templates)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path).count, 1)

        try Self.restoreDecoder(in: installed)
        expect(waitFor(seconds: 60) {
            daemon.events.contains { $0.kind == .accepted && $0.drop == "during.zip" }
        }, "\(daemon.stderr.suffix(3000))")
        expect(daemon.events.filter { $0.kind == .rejected }.isEmpty)
        expectEqual(daemon.events.filter { $0.kind == .accepted }.count, 2)
        try expect(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).isEmpty)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
        try sandbox.expectInvariants()
    }
}
