import AirlockTestSupport
import Foundation
import Testing

/// The system-call filter of deploy/airlock.service, as systemd would apply it:
/// expanded with `systemd-analyze syscall-filter`, loaded with libseccomp by a
/// small helper (Tests/Helpers/syscall-allowlist.c) that answers every other call
/// with the unit's SystemCallErrorNumber=, then airlock run beneath it.
struct UnitFilter {
    let allowed: Set<String>
    let errorNumber: Int32

    static let landlockCalls: Set<String> = ["landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"]

    /// The unit's SystemCallFilter= lines in order: the first (an allow-list) sets
    /// the list, later ones add to it, `~` ones take away, as systemd.exec(5) says.
    static func load(unit: String = "airlock.service") throws -> UnitFilter {
        let text = try String(contentsOf: Binary.repository.appendingPathComponent("deploy").appendingPathComponent(unit), encoding: .utf8)
        var allowed: Set<String> = []
        var errorNumber: Int32 = 1
        var cache: [String: Set<String>] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("SystemCallErrorNumber=") {
                let name = line.dropFirst("SystemCallErrorNumber=".count)
                errorNumber = try #require(["EPERM": 1, "EACCES": 13, "ENOSYS": 38][String(name)], "unknown errno \(name)")
            }
            guard line.hasPrefix("SystemCallFilter=") else { continue }
            var value = line.dropFirst("SystemCallFilter=".count)
            let deny = value.hasPrefix("~")
            if deny { value = value.dropFirst() }
            var calls: Set<String> = []
            for token in value.split(separator: " ") { calls.formUnion(try expand(String(token), cache: &cache)) }
            if deny { allowed.subtract(calls) } else { allowed.formUnion(calls) }
        }
        return UnitFilter(allowed: allowed, errorNumber: errorNumber)
    }

    /// A group's calls, recursively, from `systemd-analyze syscall-filter`.
    static func expand(_ token: String, cache: inout [String: Set<String>]) throws -> Set<String> {
        guard token.hasPrefix("@") else { return [token] }
        if let known = cache[token] { return known }
        let listed = try runTool("/usr/bin/systemd-analyze", ["syscall-filter", token])
        try #require(listed.status == 0, "systemd-analyze syscall-filter \(token): \(listed.output)")
        var calls: Set<String> = []
        for line in listed.output.split(separator: "\n").dropFirst() {
            let name = line.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !name.hasPrefix("#") else { continue }
            calls.formUnion(try expand(name, cache: &cache))
        }
        cache[token] = calls
        return calls
    }

    /// The helper built into `directory`, and an allow-list file for it: the
    /// wrapper to run airlock under.
    func wrapper(in directory: URL) throws -> [String] {
        let helper = directory.appendingPathComponent("syscall-allowlist").path
        let source = Binary.repository.appendingPathComponent("Tests/Helpers/syscall-allowlist.c").path
        let built = try runTool("/usr/bin/cc", ["-O", "-o", helper, source, "-lseccomp"])
        try #require(built.status == 0, "building the helper needs cc and libseccomp-dev: \(built.output)")
        let list = directory.appendingPathComponent("allowed-syscalls")
        try (allowed.sorted().joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        return [helper, String(errorNumber), list.path]
    }
}

func runTool(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

@Suite("deploy/: the unit's system-call filter keeps the decoders confined, and confinement fails closed")
struct UnitFilterTests {
    static let tools = ["/usr/bin/systemd-analyze", "/usr/bin/cc", "/usr/include/seccomp.h"]
    static var toolsMissing: Bool { !tools.allSatisfy { FileManager.default.fileExists(atPath: $0) } }

    /// doctor's JSON line, under `wrapper`.
    static func doctor(_ sandbox: Sandbox, under wrapper: [String] = []) throws -> (status: Int32, findings: DoctorDocument) {
        let result = try airlock(["doctor", "--json", "--root", sandbox.root.path], under: wrapper)
        let findings = try #require(result.document(DoctorDocument.self), "doctor printed no JSON: \(result.stderr)")
        return (result.status, findings)
    }

    /// Whether this kernel offers both mechanisms at all (otherwise there is nothing to keep).
    static func kernelOffersBoth(_ sandbox: Sandbox) throws -> Bool {
        let (_, found) = try doctor(sandbox)
        return found.bothInForce
    }

    static func fixture(_ path: String) throws -> Data {
        try Data(contentsOf: Binary.repository.appendingPathComponent(path))
    }

    /// How drops' children start: forked by a template, or (a debug build's switch,
    /// as when no template can serve) started with posix_spawn.
    static let startPaths: [[String: String]] = [[:], ["AIRLOCK_TEST_DECODER_TEMPLATES": "off"]]

    @Test("under exactly the unit's filter doctor reports full confinement and drops are decoded confined, forked or spawned",
          .enabled(if: !toolsMissing, "needs systemd-analyze, cc and libseccomp-dev"),
          .enabled(if: KernelConfinement.landlockAndSeccomp, "this kernel does not offer both Landlock and seccomp"),
          arguments: startPaths)
    func unitFilterKeepsConfinement(_ startPath: [String: String]) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try #require(try Self.kernelOffersBoth(sandbox), "doctor says the kernel offers Landlock and seccomp, but not on this root")
        let filter = try UnitFilter.load()
        expect(filter.allowed.isSuperset(of: UnitFilter.landlockCalls.union(["seccomp"])))
        expect(!filter.allowed.contains("execveat") || filter.allowed.contains("execve"))
        let wrapper = try filter.wrapper(in: sandbox.logs)
        let (status, found) = try Self.doctor(sandbox, under: wrapper)
        expectEqual(status, 0)
        expectEqual(found.landlockState, "in-force", "\(found)")
        expectEqual(found.seccompState, "in-force", "\(found)")
        expectEqual(found.problems, nil, "\(found)")

        try sandbox.drop(Self.fixture("fixtures/archives/zip-deflate-valid.zip"), as: "photos.zip")
        try sandbox.drop(Self.fixture("fixtures/keyed/memo-binary.plist"), as: "memo.plist")
        let result = try airlock(["run", "--once", "--root", sandbox.root.path],
                                 environment: startPath.merging(["AIRLOCK_TEST_TEMPLATE_TRACE": "1"]) { $1 }, under: wrapper)
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.map(\.kind), [.accepted, .accepted], "\(result.stdout)")
        expectEqual(templatesTraced(result.stderr).count, (startPath.isEmpty ? 2 : 0), "\(result.stderr)")
        expect(!result.stderr.contains("partial confinement") && !result.stderr.contains("not confined"), "\(result.stderr)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), ["memo", "photos"])
        let recorded = try JSONDecoder().decode(DoctorDocument.self,
                                                from: Data(contentsOf: sandbox.root.appendingPathComponent("state/decoder-confinement")))
        expect(recorded.bothInForce)
        try sandbox.expectInvariants()
    }

    @Test("a filter that refuses Landlock keeps every drop deferred and claimed; once confinement works they are processed", .needsLeases,
          .enabled(if: !toolsMissing, "needs systemd-analyze, cc and libseccomp-dev"),
          .enabled(if: KernelConfinement.landlockAndSeccomp, "this kernel does not offer both Landlock and seccomp"))
    func refusedLandlockDefersThenProcesses() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try #require(try Self.kernelOffersBoth(sandbox), "doctor says the kernel offers Landlock and seccomp, but not on this root")
        var filter = try UnitFilter.load()
        filter = UnitFilter(allowed: filter.allowed.subtracting(UnitFilter.landlockCalls), errorNumber: filter.errorNumber)
        let wrapper = try filter.wrapper(in: sandbox.logs)

        let (status, found) = try Self.doctor(sandbox, under: wrapper)
        expectEqual(status, 69, "doctor exits EX_UNAVAILABLE while no decoder may run")
        expectEqual(found.landlockState, "refused", "\(found)")
        expectEqual(found.seccompState, "in-force", "\(found)")
        expectEqual(found.decodersWithheld, true)
        expectEqual(found.problems?.contains("landlock_create_ruleset refused: EPERM"), true, "\(found)")

        let zip = try Self.fixture("fixtures/archives/zip-deflate-valid.zip")
        try sandbox.drop(zip, as: "photos.zip")
        let refused = try airlock(["run", "--once", "--root", sandbox.root.path], under: wrapper)
        expectEqual(refused.status, 75, "\(refused.stderr)")
        expectEqual(refused.events.first?.kind, .deferred, "\(refused.stdout)")
        expectEqual((refused.events.first?.detail)?.contains("no decoder runs unconfined"), true)
        expect(refused.stderr.contains("no decoder runs, drops wait deferred"), "\(refused.stderr)")
        try expect(sandbox.listing(sandbox.outbox) == [] && sandbox.listing(sandbox.quarantine) == [])
        let claims = try FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path)
        expectEqual(claims.count, 1)
        try expectEqual(Data(contentsOf: sandbox.claimed.appendingPathComponent(claims[0]).appendingPathComponent("drop")), zip,
                "the drop waits, whole, in its claim")
        try expectEqual(sandbox.listing(sandbox.staging), [])
        let status2 = try airlock(["status", "--root", sandbox.root.path])
        expect(status2.stdout.contains("NO DECODER RUNS"), "\(status2.stdout)")

        // The daemon under the same filter: the metrics say decoders are withheld, and why.
        try sandbox.configure("metrics", ["interval_seconds": 1])
        let daemon = try airlock(["run", "--root", sandbox.root.path], under: ["/usr/bin/timeout", "-s", "TERM", "4"] + wrapper)
        expect(daemon.status == 0 || daemon.status == 124, "\(daemon.stderr)")
        let metrics = try String(contentsOf: sandbox.root.appendingPathComponent("metrics/airlock.prom"), encoding: .utf8)
        expect(metrics.contains(#"airlock_decoder_confinement{mechanism="landlock",state="refused"} 1"#), "\(metrics)")
        expect(metrics.contains(#"airlock_decoder_confinement{mechanism="seccomp",state="in-force"} 1"#))
        expect(metrics.contains("airlock_decoders_withheld 1"))
        expect(!metrics.contains("airlock_unconfined_deferrals_total 0"), "the claimed drop was retried and declined")
        try expectEqual(sandbox.listing(sandbox.outbox), [])

        let freed = try sandbox.runOnce()
        expectEqual(freed.status, 0, "\(freed.stderr)")
        expectEqual(freed.events.first?.kind, .accepted, "\(freed.stdout)")
        expect(FileManager.default.fileExists(atPath: sandbox.outbox.appendingPathComponent("photos").path))
        try sandbox.expectInvariants()
    }

    @Test("decoder.confinement \"best-effort\" decodes with what is granted, and says so",
          .enabled(if: !toolsMissing, "needs systemd-analyze, cc and libseccomp-dev"),
          .enabled(if: KernelConfinement.landlockAndSeccomp, "this kernel does not offer both Landlock and seccomp"))
    func bestEffortOptsOut() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(decoder: ["confinement": "best-effort"])
        try #require(try Self.kernelOffersBoth(sandbox), "doctor says the kernel offers Landlock and seccomp, but not on this root")
        var filter = try UnitFilter.load()
        filter = UnitFilter(allowed: filter.allowed.subtracting(UnitFilter.landlockCalls), errorNumber: filter.errorNumber)
        let wrapper = try filter.wrapper(in: sandbox.logs)
        try sandbox.drop(Self.fixture("fixtures/archives/zip-deflate-valid.zip"), as: "photos.zip")
        let result = try airlock(["run", "--once", "--root", sandbox.root.path], under: wrapper)
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.first?.kind, .accepted)
        expect(result.stderr.contains("decoders run with partial confinement: Landlock refused"), "\(result.stderr)")
        try sandbox.expectInvariants()
    }

    @Test("airlock@.service allows exactly what airlock.service does",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/systemd-analyze"), "needs systemd-analyze"))
    func templateFilterMatches() throws {
        let single = try UnitFilter.load(unit: "airlock.service"), template = try UnitFilter.load(unit: "airlock@.service")
        expect(single.allowed == template.allowed && single.errorNumber == template.errorNumber)
    }

    @Test("systemd-analyze security rates every service unit SAFE",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/systemd-analyze"), "needs systemd-analyze"),
          arguments: ["airlock.service", "airlock@.service", "airlock-sweep.service"])
    func securityStaysSafe(_ unit: String) throws {
        let sandbox = try Sandbox()
        let binaries = URL(fileURLWithPath: Binary.airlock).deletingLastPathComponent().path + "/"
        let text = try String(contentsOf: Binary.repository.appendingPathComponent("deploy").appendingPathComponent(unit), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/", with: binaries)
        let file = sandbox.base.appendingPathComponent(unit == "airlock@.service" ? "airlock@test.service" : unit)
        try text.write(to: file, atomically: true, encoding: .utf8)
        let result = try runTool("/usr/bin/systemd-analyze", ["security", "--offline=yes", file.path])
        expect(result.output.contains("SAFE"), "\(result.output.split(separator: "\n").suffix(2))")
    }
}
