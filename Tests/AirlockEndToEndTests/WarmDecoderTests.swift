import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A running daemon's decoder children waiting for a drop, as /proc shows them.
struct WaitingDecoders {
    let daemon: Int32

    /// The pids of the daemon's children started ahead of need and still waiting.
    var pids: Set<Int32> {
        ProcessTable.processes(commandLineContaining: "--await-hand-over", parent: daemon)
    }

    /// The one waiting child, once there is exactly one.
    func one(within seconds: Double = 20) -> Int32? {
        var found: Set<Int32> = []
        guard waitFor(seconds: seconds, { found = pids; return found.count == 1 }) else { return nil }
        return found.first
    }

    /// CPU seconds (user and system) `pid` has spent, from /proc.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let user = ProcessTable.statField(pid, 11), let system = ProcessTable.statField(pid, 12) else { return 0 }
        let ticks = (Double(user) ?? 0) + (Double(system) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

@Suite("Decoders started ahead of need: each takes one drop, confined as any other, limits from the hand-over, none left at exit", .needsLeases,
       .serialized)
struct WarmDecoderTests {
    /// Children come from templates first; these tests reach the pre-started ones
    /// that serve when no template can (a debug build's switch).
    static let noTemplates = "AIRLOCK_TEST_DECODER_TEMPLATES"

    func renamedDrop(_ data: Data, as name: String, in sandbox: Sandbox) throws {
        let temporary = sandbox.inbox.appendingPathComponent(".\(name).tmp")
        try data.write(to: temporary)
        #expect(rename(temporary.path, sandbox.inbox.appendingPathComponent(name).path) == 0)
    }

    /// Stops the daemon and checks that it left no decoder behind.
    func stop(_ daemon: RunningDaemon, waiting: WaitingDecoders, last: Int32?) {
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(seconds: 60) == 0, "\(daemon.stderr)")
        if let last { #expect(!FileManager.default.fileExists(atPath: "/proc/\(last)"), "the waiting decoder outlived the daemon") }
        #expect(waiting.pids.isEmpty)
    }

    /// The first drop gets a fresh child; the second goes to the child the worker
    /// started for it, which is gone afterwards while another waits.
    func twoDrops(_ data: Data, _ sandbox: Sandbox, _ daemon: RunningDaemon,
                  beforeSecond: (Int32) -> Void = { _ in }) throws -> (verdicts: [Event], last: Int32?) {
        let waiting = WaitingDecoders(daemon: daemon.process.processIdentifier)
        try renamedDrop(data, as: "first.zip", in: sandbox)
        daemon.waitForVerdicts(1)
        let warm = try #require(waiting.one(), "no decoder waiting after the first drop: \(daemon.stderr)")
        beforeSecond(warm)
        try renamedDrop(data, as: "second.zip", in: sandbox)
        let verdicts = daemon.waitForVerdicts(2)
        let next = waiting.one()
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(warm)"), "the child that took the second drop is gone")
        #expect(next != nil && next != warm, "another child waits for the next drop")
        return (verdicts, next)
    }

    @Test("an escaping decoder started ahead of need is refused like a fresh one",
          .enabled(if: KernelConfinement.landlockAndSeccomp, "skipped: the kernel does not put both Landlock and seccomp in force (airlock doctor)"),
          arguments: ConfinementTests.landlockCases + ConfinementTests.seccompCases)
    func escapes(_ item: EscapeCase) throws {
        try KernelConfinement.requireDoctor()
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["workers": 1])
        let tmpBefore = try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("airlock-escape") }
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_DECODER_FAULT": item.mode, Self.noTemplates: "off"])
        let (verdicts, last) = try twoDrops(Samples.validZip, sandbox, daemon)
        stop(daemon, waiting: WaitingDecoders(daemon: daemon.process.processIdentifier), last: last)
        let second = try #require(verdicts.first { $0.drop == "second.zip" })
        #expect(second.kind == .rejected && second.reason == item.reason, "\(second)")
        let refusals = item.errnos.map { daemon.stderr.components(separatedBy: "test escape \(item.mode): failed with \($0)").count - 1 }.reduce(0, +)
        let signalled = verdicts.filter { ($0.detail).map { detail in item.signal.map(detail.contains) ?? false } ?? false }.count
        #expect(refusals + signalled == 2, "both drops' attempts refused: \(daemon.stderr)")
        #expect(!daemon.stderr.contains("SUCCEEDED"), "\(daemon.stderr)")
        try sandbox.expectInvariants()
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("escape-in-root").path))
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("state/escape-beside-staging").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("airlock-escape") } == tmpBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [])
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path)
        #expect(quarantined.count == 2)
        for id in quarantined {
            #expect(try Data(contentsOf: sandbox.quarantine.appendingPathComponent(id).appendingPathComponent("drop")) == Samples.validZip)
        }
    }

    @Test("a child's CPU and wall-clock limits count from the hand-over, not from its start")
    func limitsFromHandOver() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(decoder: ["cpu_seconds": 1, "timeout_seconds": 2])
        try sandbox.configure("watch", ["workers": 1])
        // Each waiting child burns 1.5 s of CPU before it can take a drop.
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_WARM_SPIN_MS": "1500", Self.noTemplates: "off"])
        let (verdicts, last) = try twoDrops(Samples.validZip, sandbox, daemon) { warm in
            // Past both limits, counted from the child's start, before its drop arrives.
            // 1.4: /proc counts in clock ticks, and the child stops at 1.5 s by its own finer clock.
            #expect(waitFor(seconds: 60) { WaitingDecoders.cpuSeconds(warm) >= 1.4 }, "the child did not spin")
            usleep(2_500_000)
        }
        stop(daemon, waiting: WaitingDecoders(daemon: daemon.process.processIdentifier), last: last)
        #expect(verdicts.allSatisfy { $0.kind == .accepted }, "\(verdicts) \(daemon.stderr)")
        try sandbox.expectInvariants()
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted() == ["first", "second"])
    }

    @Test("under exactly the unit's filter, archive and keyed drops are handed to children started ahead of need",
          .enabled(if: !UnitFilterTests.toolsMissing, "needs systemd-analyze, cc and libseccomp-dev"),
          .enabled(if: KernelConfinement.landlockAndSeccomp, "this kernel does not offer both Landlock and seccomp"))
    func underTheUnitFilter() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["workers": 1])
        let wrapper = try UnitFilter.load().wrapper(in: sandbox.logs)
        let daemon = try RunningDaemon(sandbox, environment: [Self.noTemplates: "off"], under: wrapper)
        let waiting = WaitingDecoders(daemon: daemon.process.processIdentifier)
        let zip = try UnitFilterTests.fixture("fixtures/archives/zip-deflate-valid.zip")
        let memo = try UnitFilterTests.fixture("fixtures/keyed/memo-binary.plist")
        var used: [Int32] = []
        for (index, (data, name)) in [(zip, "a.zip"), (zip, "b.zip"), (memo, "c.plist"), (memo, "d.plist")].enumerated() {
            let before = waiting.pids
            try renamedDrop(data, as: name, in: sandbox)
            daemon.waitForVerdicts(index + 1)
            // The second drop of each program goes to the child the first one left waiting.
            if index % 2 == 1 { used += before.filter { !FileManager.default.fileExists(atPath: "/proc/\($0)") } }
            #expect(waitFor(seconds: 20) { waiting.pids.count == (index < 2 ? 1 : 2) }, "\(waiting.pids)")
        }
        #expect(used.count == 2, "one archive and one keyed child took a drop: \(used)")
        stop(daemon, waiting: waiting, last: nil)
        #expect(daemon.events.map { $0.kind.rawValue } == ["accepted", "accepted", "accepted", "accepted"], "\(daemon.stderr)")
        #expect(!daemon.stderr.contains("partial confinement") && !daemon.stderr.contains("not confined"), "\(daemon.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted() == ["a", "b", "c", "d"])
        try sandbox.expectInvariants()
    }
}
