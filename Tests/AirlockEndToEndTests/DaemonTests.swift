import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Watcher daemon: fed as real producers feed it, stopped, killed and restarted", .needsLeases, .serialized)
struct DaemonTests {
    /// Each name ends accepted or rejected exactly once.
    func expectExactlyOnce(_ verdicts: [Event], names: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let dropped = verdicts.map(\.drop)
        expectEqual(dropped.sorted(), names.sorted(), sourceLocation: sourceLocation)
    }

    @Test("temporary name then rename, one write, cp, a slow writer and a writer that reopens to append: each whole, once")
    func producers() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox)
        let zip = Samples.validZip

        // A temporary name, then a rename.
        try zip.write(to: sandbox.inbox.appendingPathComponent("renamed.zip.part"))
        usleep(700_000)
        expectEqual(rename(sandbox.inbox.appendingPathComponent("renamed.zip.part").path, sandbox.inbox.appendingPathComponent("renamed.zip").path), 0)
        // One write and close.
        try zip.write(to: sandbox.inbox.appendingPathComponent("single.zip"))
        // cp.
        try expectEqual(airlockShell("/bin/cp", [Samples.fixture("zip-deflate-valid.zip").path, sandbox.inbox.appendingPathComponent("copied.zip").path]), 0)
        // A slow writer: three chunks, pausing longer than the settle interval, the file open throughout.
        let slow = try FileHandle(forWritingTo: { () -> URL in
            let url = sandbox.inbox.appendingPathComponent("slow.zip")
            FileManager.default.createFile(atPath: url.path, contents: nil)
            return url
        }())
        let third = zip.count / 3
        for part in [zip[0..<third], zip[third..<2 * third], zip[(2 * third)...]] {
            try slow.write(contentsOf: part)
            usleep(900_000)
        }
        try slow.close()
        // A writer that closes and reopens to append, within the settle interval.
        let appendURL = sandbox.inbox.appendingPathComponent("appended.zip")
        try zip[0..<third].write(to: appendURL)
        usleep(200_000)
        let appender = try FileHandle(forWritingTo: appendURL)
        try appender.seekToEnd()
        usleep(900_000)
        try appender.write(contentsOf: zip[third...])
        try appender.close()

        let verdicts = daemon.waitForVerdicts(5)
        expectExactlyOnce(verdicts, names: ["renamed.zip", "single.zip", "copied.zip", "slow.zip", "appended.zip"])
        for verdict in verdicts {
            expectEqual(verdict.kind, .accepted, "\(verdict)")
        }
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), ["appended", "copied", "renamed", "single", "slow"])
        for name in ["appended", "slow"] {
            try expectEqual(sandbox.listing(sandbox.outbox.appendingPathComponent(name)).count, 9, "\(name) is not whole")
        }
    }

    /// 200 drops are fifty times the queue's bound: most wait outside the queue,
    /// as 500 did, at under a third of the processor time (each costs a child).
    @Test("200 drops at once, with a small queue: each processed exactly once")
    func flood() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["queue_limit": 4, "settle_milliseconds": 100])
        let daemon = try RunningDaemon(sandbox)
        var names: [String] = []
        let valid = Samples.validZip, hostile = Samples.traversalZip
        for index in 0..<200 {
            let name = "drop-\(index).zip"
            let temporary = sandbox.inbox.appendingPathComponent(".\(name).tmp")
            try (index % 5 == 0 ? hostile : valid).write(to: temporary)
            expectEqual(rename(temporary.path, sandbox.inbox.appendingPathComponent(name).path), 0)
            names.append(name)
        }
        let verdicts = daemon.waitForVerdicts(200, seconds: 240)
        expectExactlyOnce(verdicts, names: names)
        expectEqual(verdicts.filter { $0.kind == .rejected }.count, 40)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, 160)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).count, 40)
    }

    @Test("drops made while the daemon was stopped are processed when it starts")
    func backlogAtStart() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let names = (0..<40).map { "waiting-\($0).zip" }
        for name in names { try sandbox.drop(Samples.validZip, as: name) }
        let daemon = try RunningDaemon(sandbox)
        let verdicts = daemon.waitForVerdicts(40)
        expectExactlyOnce(verdicts, names: names)
        daemon.signal(SIGINT)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
    }

    @Test("SIGKILL while a large drop is extracted, then a restart: no partial outbox entry, staging empty, processed once")
    func killAndRestart() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: ["max_file_bytes": 64 << 20, "max_total_bytes": 512 << 20, "max_drop_bytes": 512 << 20])
        let files = (0..<12).map { (name: "big/part-\($0).bin", size: 16 << 20) }
        let tar = TarBuilder.archive(files)
        let daemon = try RunningDaemon(sandbox)
        try tar.write(to: sandbox.logs.appendingPathComponent("big.tar.tmp"))
        expectEqual(rename(sandbox.logs.appendingPathComponent("big.tar.tmp").path, sandbox.inbox.appendingPathComponent("big.tar").path), 0)
        let extracting = waitFor(seconds: 30) {
            guard let ids = try? FileManager.default.contentsOfDirectory(atPath: sandbox.staging.path), let id = ids.first else { return false }
            let part = sandbox.staging.appendingPathComponent(id).appendingPathComponent("big")
            return ((try? FileManager.default.contentsOfDirectory(atPath: part.path))?.count ?? 0) >= 2
        }
        expect(extracting, "extraction never started")
        daemon.signal(SIGKILL)
        expect(daemon.waitForExit(seconds: 10) != nil)
        // The decoder dies with its parent (PR_SET_PDEATHSIG).
        expect(waitFor(seconds: 5) { decodersWriting(into: sandbox.staging).isEmpty })
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])

        let restarted = try RunningDaemon(sandbox, label: "restarted")
        let verdicts = restarted.waitForVerdicts(1, seconds: 120)
        expectEqual(verdicts.count, 1)
        expectEqual(verdicts.first?.kind, .accepted, "\(verdicts)")
        restarted.signal(SIGTERM)
        expectEqual(restarted.waitForExit(seconds: 30), 0)
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["big"])
        try expectEqual(sandbox.listing(sandbox.outbox.appendingPathComponent("big")).count, 13)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [])
    }

    @Test("SIGTERM with work in flight: the drop finishes within the grace period and the exit is clean")
    func termFinishesInFlight() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_DECODER_FAULT": "delay"])
        try sandbox.drop(Samples.validZip, as: "slow.zip")
        expect(waitFor(seconds: 10) { ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.staging.path))?.count ?? 0) == 1 })
        let started = Date()
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        expect(Date().timeIntervalSince(started) < 10)
        expectEqual(daemon.events.first?.kind, .accepted)
        try sandbox.expectInvariants()
    }

    @Test("SIGTERM past the grace period kills the decoder and leaves the drop claimed for the next start")
    func termAbandonsAfterGrace() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["grace_seconds": 1])
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_DECODER_FAULT": "hang"])
        try sandbox.drop(Samples.validZip, as: "stuck.zip")
        expect(waitFor(seconds: 10) { ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.staging.path))?.count ?? 0) == 1 })
        let started = Date()
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        expect(Date().timeIntervalSince(started) < 8)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.staging.path), [])
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path).count, 1, "the drop stays claimed")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [], "an abandoned drop is not judged")

        let restarted = try RunningDaemon(sandbox, label: "restarted")
        let verdicts = restarted.waitForVerdicts(1)
        expectEqual(verdicts.first?.kind, .accepted)
        expectEqual(verdicts.first?.drop, "stuck.zip")
        restarted.signal(SIGTERM)
        expectEqual(restarted.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
    }

    @Test("the inbox removed and recreated while running: drops in the new inbox are processed")
    func inboxRecreated() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox)
        try sandbox.drop(Samples.validZip, as: "before.zip")
        daemon.waitForVerdicts(1)
        try FileManager.default.removeItem(at: sandbox.inbox)
        expect(waitFor(seconds: 10) { daemon.stderr.contains("went away") })
        try FileManager.default.createDirectory(at: sandbox.inbox, withIntermediateDirectories: false)
        expect(waitFor(seconds: 10) { daemon.stderr.contains("is back") })
        try sandbox.drop(Samples.validZip, as: "after.zip")
        let verdicts = daemon.waitForVerdicts(2)
        expectExactlyOnce(verdicts, names: ["before.zip", "after.zip"])
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
    }

    @Test("a permission error on the outbox defers the drop, which is retried until it lands",
          .enabled(if: Requirement.immutable, "needs CAP_LINUX_IMMUTABLE (root), chattr and a temporary filesystem that keeps chattr +i"))
    func deferredThenRetried() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox)
        try #require(try airlockShell("/usr/bin/chattr", ["+i", sandbox.outbox.path]) == 0, "chattr +i on the outbox failed, though it worked on a probe directory")
        try sandbox.drop(Samples.validZip, as: "later.zip")
        expect(waitFor(seconds: 20) { daemon.events.contains { $0.kind == .deferred } })
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path).count, 1)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.staging.path), [])
        _ = try airlockShell("/usr/bin/chattr", ["-i", sandbox.outbox.path])
        let verdicts = daemon.waitForVerdicts(1, seconds: 30)
        expectEqual(verdicts.first?.kind, .accepted)
        expectEqual(verdicts.first?.id, daemon.events.first?.id, "the same claim, retried")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
    }

    @Test("systemd notification: READY=1 once watching, STATUS= with counts, WATCHDOG=1, STOPPING=1")
    func notify() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let socket = try FakeNotifySocket(at: sandbox.logs.appendingPathComponent("notify"))
        let daemon = try RunningDaemon(sandbox, environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "400000"])
        try sandbox.drop(Samples.validZip, as: "counted.zip")
        daemon.waitForVerdicts(1)
        var received: [String] = []
        expect(waitFor(seconds: 5) {
            received += socket.messages()
            return received.contains { $0.contains("1 accepted") } && received.filter { $0 == "WATCHDOG=1" }.count >= 2
        }, "\(received)")
        expectEqual(received.first, "READY=1", "\(received)")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        received += socket.messages()
        expect(received.contains("STOPPING=1"))
        try sandbox.expectInvariants()
    }

    @Test("SIGHUP reloads the configuration; a bad one is refused and the old one kept")
    func reload() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox)
        try sandbox.configure("policy", ["max_entries": 2])
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 10) { daemon.stderr.contains("configuration reloaded") })
        try sandbox.drop(Samples.validZip, as: "strict.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.reason, "too-many-entries")

        try Data(#"{"policy": {"max_entries": -3}}"#.utf8).write(to: sandbox.root.appendingPathComponent("airlock.json"))
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 10) { daemon.stderr.contains("keeping the configuration in force") })
        try sandbox.drop(Samples.validZip, as: "still-strict.zip")
        expectEqual(daemon.waitForVerdicts(2).last?.reason, "too-many-entries")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
    }
}

/// Processes whose descriptor 4 (a decoder's staging directory) lies beneath `staging`.
func decodersWriting(into staging: URL) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(Int32.init).filter { pid in
        let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/4")) ?? ""
        return target.hasPrefix(staging.path + "/")
    }
}
