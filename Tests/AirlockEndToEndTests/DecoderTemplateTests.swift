import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A supervisor's decoder processes started with `--template`, as /proc shows
/// them: the templates themselves and the children they forked (which keep the
/// template's command line, and whose parent is the supervisor too).
struct TemplateProcesses {
    let supervisor: Int32

    var pids: Set<Int32> {
        ProcessTable.processes(commandLineContaining: "--template", parent: supervisor)
    }

    /// Every process started with `--template` and its parent, for failure messages.
    static func everyTemplate() -> [Int32: String] {
        var found: [Int32: String] = [:]
        for pid in ProcessTable.processes(commandLineContaining: "--template") {
            found[pid] = "parent \(ProcessTable.statField(pid, 1) ?? "?") state \(ProcessTable.statField(pid, 0) ?? "?")"
        }
        return found
    }

    /// Whether `pid` runs (a zombie has ended, whoever reaps it).
    static func isAlive(_ pid: Int32) -> Bool {
        guard let state = ProcessTable.statField(pid, 0) else { return false }
        return state != "Z"
    }

    /// Each open descriptor of `pid` and what it names (`readlink /proc/PID/fd/N`).
    static func descriptors(_ pid: Int32) -> [Int: String] {
        let directory = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var found: [Int: String] = [:]
        for entry in entries {
            guard let number = Int(entry), let target = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + entry) else { continue }
            found[number] = target
        }
        return found
    }

    /// Whether `pid` is a forked child that has confined itself: it holds the
    /// staging directory of a drop and nothing above its result pipe. (A template
    /// holds a drop's descriptors, above 6, from the request until the fork.)
    static func isConfinedChild(_ pid: Int32, _ sandbox: Sandbox) -> Bool {
        let held = descriptors(pid)
        return held[4]?.contains("/\(sandbox.base.lastPathComponent)/root/state/staging/") == true && held.keys.allSatisfy { $0 <= 5 }
    }
}

/// The template lines that debug builds print with AIRLOCK_TEST_TEMPLATE_TRACE: one per forked child.
func templatesTraced(_ stderr: String) -> [String] {
    stderr.split(separator: "\n").compactMap { line in
        line.firstMatch(of: /decoder: forked by template ([0-9]+)/).map { String($0.1) }
    }
}

@Suite("Decoder templates: each drop's child forked from a loaded template, confined as any other, one drop each",
       .serialized)
struct DecoderTemplateTests {
    static let trace = ["AIRLOCK_TEST_TEMPLATE_TRACE": "1"]
    /// A debug build's switch: every drop's child started with posix_spawn, as when no template can serve.
    static let noTemplates = ["AIRLOCK_TEST_DECODER_TEMPLATES": "off"]

    /// Verdicts by drop name, with what they say about the drop.
    static func verdicts(_ events: [Event]) -> [String: String] {
        var found: [String: String] = [:]
        for event in events {
            found[event.drop] = [event.kind.rawValue, event.reason, event.files.map { "\($0)" }, event.bytes.map { "\($0)" }, event.entry]
                .map { $0 ?? "-" }.joined(separator: " ")
        }
        return found
    }

    static let corpus: [(String, String)] = [
        ("fixtures/archives/zip-deflate-valid.zip", "valid.zip"), ("fixtures/archives/zip-traversal.zip", "traversal.zip"),
        ("fixtures/keyed/memo-binary.plist", "memo.plist"), ("fixtures/archives/zip-deflate-valid.zip", "again.zip"),
        ("fixtures/keyed/memo-binary.plist", "memo2.plist"),
    ]

    @Test("run --once decodes every drop in a child a template forked, with the verdicts and outbox of fresh children")
    func sameAsFreshChildren() throws {
        var outcomes: [[String: String]] = []
        var outboxes: [[String: String]] = []
        for environment in [Self.trace, Self.noTemplates.merging(Self.trace) { $1 }] {
            let sandbox = try Sandbox()
            try sandbox.initialise()
            for (path, name) in Self.corpus { try sandbox.drop(UnitFilterTests.fixture(path), as: name) }
            let result = try sandbox.runOnce(environment: environment)
            expectEqual(result.status, 0, "\(result.stderr)")
            let forked = templatesTraced(result.stderr)
            expectEqual(forked.count, (environment["AIRLOCK_TEST_DECODER_TEMPLATES"] == nil ? Self.corpus.count : 0), "\(result.stderr)")
            outcomes.append(Self.verdicts(result.events))
            let files = try sandbox.listing(sandbox.outbox).filter { !$0.hasSuffix("/") }
            outboxes.append(try sha256Hexes(files, in: sandbox.outbox))
            try sandbox.expectInvariants()
        }
        expectEqual(outcomes[0].count, Self.corpus.count)
        expectEqual(outcomes[0], outcomes[1])
        expectEqual(outboxes[0], outboxes[1])
        expect(!outboxes[0].isEmpty)
    }

    @Test("an escaping child forked by a template is refused like a fresh one",
          .enabled(if: KernelConfinement.landlockAndSeccomp, "skipped: the kernel does not put both Landlock and seccomp in force (airlock doctor)"),
          arguments: ConfinementTests.landlockCases + ConfinementTests.seccompCases + ConfinementTests.limitCases)
    func escapes(_ item: EscapeCase) throws {
        let result = try ConfinementTests().attempt(item, environment: Self.trace)
        expectEqual(templatesTraced(result.stderr).count, 1, "the drop's child came from a template: \(result.stderr)")
    }

    @Test("an escaping child started with posix_spawn, where no template serves, is refused like a forked one",
          .enabled(if: KernelConfinement.landlockAndSeccomp, "skipped: the kernel does not put both Landlock and seccomp in force (airlock doctor)"),
          arguments: ConfinementTests.landlockCases + ConfinementTests.seccompCases + ConfinementTests.limitCases)
    func spawnedEscapes(_ item: EscapeCase) throws {
        let result = try ConfinementTests().attempt(item, environment: Self.trace.merging(Self.noTemplates) { $1 })
        expect(templatesTraced(result.stderr).isEmpty, "the drop's child was spawned, not forked: \(result.stderr)")
    }

    @Test("while its child decodes, the template holds none of the drop's descriptors; both die with the supervisor, and the drop is not lost", .needsLeases)
    func descriptorsAndSupervisorDeath() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(decoder: ["timeout_seconds": 120])
        try sandbox.configure("watch", ["workers": 1])
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_DECODER_FAULT": "hang"])
        let processes = TemplateProcesses(supervisor: daemon.process.processIdentifier)
        try sandbox.drop(Samples.validZip, as: "held.zip")
        var child: Int32?
        expect(waitFor(seconds: 30) {
            child = processes.pids.first { TemplateProcesses.isConfinedChild($0, sandbox) }
            return child != nil
        }, "no forked child holds the staging directory: \(daemon.stderr)")
        let templates = processes.pids.subtracting(child.map { [$0] } ?? [])
        expectEqual(templates.count, 1, "one template for the archive decoder: \(templates) child \(String(describing: child)) \(TemplateProcesses.everyTemplate()) \(daemon.stderr)")
        for template in templates {
            let held = TemplateProcesses.descriptors(template)
            expectEqual(Set(held.keys), [0, 1, 2, 3, 4, 5, 6], "template \(template), child \(String(describing: child)): \(held) \(child.map(TemplateProcesses.descriptors) ?? [:])")
            expect([0, 1, 3, 4, 5].allSatisfy { held[$0] == "/dev/null" }, "\(held)")
            expectEqual(held[6]?.hasPrefix("socket:"), true, "\(held)")
            expect(!held.values.contains { $0.contains("/\(sandbox.base.lastPathComponent)/root") || $0.hasPrefix("pipe:") }, "\(held)")
        }
        let everyone = templates.union(child.map { [$0] } ?? [])
        daemon.signal(SIGKILL)
        _ = daemon.waitForExit(seconds: 15)
        expect(waitFor(seconds: 15) { everyone.allSatisfy { !TemplateProcesses.isAlive($0) } }, "a decoder outlived its supervisor")
        // The drop stayed claimed; the next run takes it.
        let rerun = try sandbox.runOnce()
        expectEqual(rerun.events.map { $0.kind.rawValue }, ["accepted"], "\(rerun.stdout) \(rerun.stderr)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["held"])
        try sandbox.expectInvariants()
    }

    @Test("a template killed mid-run is replaced and no drop is lost; the daemon's templates end when it stops", .needsLeases)
    func killedTemplateLosesNothing() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["workers": 2])
        let daemon = try RunningDaemon(sandbox, environment: Self.trace)
        let processes = TemplateProcesses(supervisor: daemon.process.processIdentifier)
        let count = 40
        for index in 0..<count { try sandbox.drop(Samples.validZip, as: "d\(index).zip") }
        expect(waitFor(seconds: 60) { daemon.events.count >= 3 }, "\(daemon.stderr)")
        let first = try #require(templatesTraced(daemon.stderr).first.flatMap(Int32.init))
        expectEqual(kill(first, SIGKILL), 0)
        let verdicts = daemon.waitForVerdicts(count, seconds: 120)
        expect(verdicts.count == count && verdicts.allSatisfy { $0.kind == .accepted }, "\(daemon.stderr)")
        let traced = Set(templatesTraced(daemon.stderr))
        expect(traced.count >= 2 && traced.contains(String(first)), "a second template took over: \(traced)")
        let running = processes.pids
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 60), 0, "\(daemon.stderr)")
        expect(running.allSatisfy { !TemplateProcesses.isAlive($0) }, "a template outlived the daemon")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, count)
        try sandbox.expectInvariants()
    }

    @Test("after SIGHUP no template serves the old configuration: the next drop's child comes from a fresh one with the new magic database", .needsLeases)
    func reloadReplacesTemplates() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        // libmagic runs only when asked: here it is, so that templates load a database.
        try sandbox.configure("content", ["detect_types": true])
        let daemon = try RunningDaemon(sandbox, environment: Self.trace)
        let processes = TemplateProcesses(supervisor: daemon.process.processIdentifier)
        try sandbox.drop(Samples.validZip, as: "before.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.kind, .accepted, "\(daemon.stderr)")
        let first = try #require(templatesTraced(daemon.stderr).first.flatMap(Int32.init))
        expect(TemplateProcesses.isAlive(first))

        let database = sandbox.base.appendingPathComponent("magic-copy.mgc")
        try FileManager.default.copyItem(atPath: "/usr/lib/file/magic.mgc", toPath: database.path)
        try sandbox.configure("content", ["magic_database": database.path])
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 10) { daemon.stderr.contains("configuration reloaded") }, "\(daemon.stderr)")
        expect(waitFor(seconds: 5) { !TemplateProcesses.isAlive(first) }, "the old template is gone: \(TemplateProcesses.everyTemplate())")

        try sandbox.drop(Samples.validZip, as: "after.zip")
        let verdicts = daemon.waitForVerdicts(2)
        expect(verdicts.count == 2 && verdicts.allSatisfy { $0.kind == .accepted }, "\(daemon.stderr)")
        let traced = templatesTraced(daemon.stderr).compactMap(Int32.init)
        let second = try #require(traced.last)
        expect(traced.count == 2 && second != first, "\(traced)")
        let onNewDatabase = ProcessTable.processes(commandLineContaining: database.path, parent: processes.supervisor)
        expect(processes.pids.contains(second) && onNewDatabase.contains(second), "\(TemplateProcesses.everyTemplate())")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0, "\(daemon.stderr)")
        expect(!TemplateProcesses.isAlive(second), "a template outlived the daemon")
        // The test's own file beside the root, not anything airlock wrote there.
        try FileManager.default.removeItem(at: database)
        try sandbox.expectInvariants()
    }

    @Test("a template forks at most its bound of children, then a fresh one takes over")
    func recycled() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["workers": 1])
        for index in 0..<7 { try sandbox.drop(Samples.validZip, as: "d\(index).zip") }
        let result = try sandbox.runOnce(environment: Self.trace.merging(["AIRLOCK_TEST_TEMPLATE_CHILDREN": "3"]) { $1 })
        expect(result.events.count == 7 && result.events.allSatisfy { $0.kind == .accepted }, "\(result.stderr)")
        let traced = templatesTraced(result.stderr)
        expectEqual(traced.count, 7)
        let perTemplate = Dictionary(grouping: traced, by: { $0 }).mapValues(\.count)
        expect(perTemplate.count == 3 && perTemplate.values.allSatisfy { $0 <= 3 }, "\(perTemplate)")
        try sandbox.expectInvariants()
    }

    @Test("a forked child that cannot confine itself decodes nothing: under a filter that refuses Landlock the drop waits, deferred and claimed",
          .enabled(if: !UnitFilterTests.toolsMissing, "needs systemd-analyze, cc and libseccomp-dev"),
          .enabled(if: KernelConfinement.landlockAndSeccomp, "this kernel does not offer both Landlock and seccomp"))
    func failsClosed() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        var filter = try UnitFilter.load()
        filter = UnitFilter(allowed: filter.allowed.subtracting(UnitFilter.landlockCalls), errorNumber: filter.errorNumber)
        let wrapper = try filter.wrapper(in: sandbox.logs)
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let refused = try airlock(["run", "--once", "--root", sandbox.root.path], environment: Self.trace, under: wrapper)
        expectEqual(refused.status, 75, "\(refused.stderr)")
        expectEqual(templatesTraced(refused.stderr).count, 1, "the drop's child came from a template: \(refused.stderr)")
        expectEqual(refused.events.map { $0.kind.rawValue }, ["deferred"], "\(refused.stdout)")
        try expect(sandbox.listing(sandbox.outbox) == [] && sandbox.listing(sandbox.quarantine) == [] && sandbox.listing(sandbox.staging) == [])
        let claims = try FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path)
        expectEqual(claims.count, 1)
        try expectEqual(Data(contentsOf: sandbox.claimed.appendingPathComponent(claims[0]).appendingPathComponent("drop")), Samples.validZip)
    }

    @Test("where clone3 is refused with ENOSYS, as systemd's RestrictNamespaces= does, templates fork with clone under the unit's filter",
          .enabled(if: !UnitFilterTests.toolsMissing, "needs systemd-analyze, cc and libseccomp-dev"),
          .enabled(if: KernelConfinement.landlockAndSeccomp, "this kernel does not offer both Landlock and seccomp"))
    func underTheUnitFilter() throws {
        for refuseClone3 in [false, true] {
            let sandbox = try Sandbox()
            try sandbox.initialise()
            var filter = try UnitFilter.load()
            expect(filter.allowed.isSuperset(of: ["clone", "clone3", "pidfd_open", "pidfd_send_signal", "waitid"]))
            if refuseClone3 { filter = UnitFilter(allowed: filter.allowed.subtracting(["clone3"]), errorNumber: 38) }
            let wrapper = try filter.wrapper(in: sandbox.logs)
            for (path, name) in Self.corpus { try sandbox.drop(UnitFilterTests.fixture(path), as: name) }
            let result = try airlock(["run", "--once", "--root", sandbox.root.path], environment: Self.trace, under: wrapper)
            expectEqual(result.status, 0, "\(result.stderr)")
            expectEqual(templatesTraced(result.stderr).count, Self.corpus.count, "\(result.stderr)")
            expectEqual(Self.verdicts(result.events).values.filter { $0.hasPrefix("accepted") }.count, 4, "\(result.stdout)")
            expect(!result.stderr.contains("partial confinement") && !result.stderr.contains("not confined"), "\(result.stderr)")
            try sandbox.expectInvariants()
        }
    }
}
