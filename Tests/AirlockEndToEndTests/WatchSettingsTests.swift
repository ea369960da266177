import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Temporary names, reloads and the messages that name what to change.
@Suite("Watching: temporary names added or abandoned, reloads that rescan or refuse, limits named in reasons")
struct WatchSettingsTests {
    /// Sets a file's modification (and access) time `seconds` in the past.
    func age(_ url: URL, seconds: Int) {
        let then = Date().addingTimeInterval(-TimeInterval(seconds))
        try? FileManager.default.setAttributes([.modificationDate: then], ofItemAtPath: url.path)
    }

    @Test("watch.ignore_also adds to the defaults; a watch.ignore that leaves defaults out is warned about", .needsLeases)
    func ignoreAlsoKeepsDefaults() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["ignore_also": ["*.upload"], "settle_milliseconds": 100])
        try sandbox.drop(Samples.validZip, as: "a.zip.upload")
        try sandbox.drop(Samples.validZip, as: ".rsync.a.zip.XyZ123")
        try sandbox.drop(Samples.validZip, as: "b.zip")
        let once = try sandbox.runOnce()
        expectEqual(once.events.compactMap { $0.drop }, ["b.zip"], "\(once.stdout)")
        expect(FileManager.default.fileExists(atPath: sandbox.inbox.appendingPathComponent("a.zip.upload").path))

        try sandbox.configure("watch", ["ignore": ["*.upload"], "ignore_also": []])
        let doctor = try airlock(["doctor", "--root", sandbox.root.path])
        expect(doctor.stderr.contains("watch.ignore replaces the default patterns") && doctor.stderr.contains("watch.ignore_also"),
                "\(doctor.stderr)")
        let daemon = try RunningDaemon(sandbox)
        expect(daemon.stderr.contains("leaves out .* *.part *.filepart *.tmp *~"), "\(daemon.stderr)")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
    }

    @Test("SIGHUP rescans: a name no longer ignored is taken at once, not at the next periodic rescan", .needsLeases)
    func reloadRescans() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["ignore_also": ["*.hold"], "rescan_seconds": 3600, "settle_milliseconds": 100])
        let daemon = try RunningDaemon(sandbox)
        try sandbox.drop(Samples.validZip, as: "held.zip.hold")
        usleep(1_500_000)
        expect(daemon.events.isEmpty, "an ignored name is left alone")
        try sandbox.configure("watch", ["ignore_also": []])
        let reloaded = Date()
        daemon.signal(SIGHUP)
        let events = daemon.waitForVerdicts(1, seconds: 10)
        expectEqual(events.first?.drop, "held.zip.hold")
        expect(Date().timeIntervalSince(reloaded) < 5, "taken after the reload's rescan, not the hourly one")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
    }

    @Test("SIGHUP with a configuration naming another root is refused, saying so, and the running configuration stays", .needsLeases)
    func reloadRefusesAnotherRoot() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox)
        try sandbox.configure("policy", ["max_entries": 2])
        let file = sandbox.root.appendingPathComponent("airlock.json")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        config["root"] = sandbox.base.appendingPathComponent("elsewhere").path
        try JSONSerialization.data(withJSONObject: config).write(to: file)
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 10) { daemon.stderr.contains("the root cannot change while running: configuration not reloaded") },
                "\(daemon.stderr)")
        try sandbox.drop(Samples.validZip, as: "lenient.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.kind, .accepted, "max_entries 2 was not put in force")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
    }

    @Test("temporary names are counted in status and metrics; past watch.abandoned_remove_seconds the unwritten ones nobody holds open are removed", .needsLeases)
    func abandonedUploads() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("metrics", ["interval_seconds": 1])
        let old = sandbox.inbox.appendingPathComponent("old.zip.part"), held = sandbox.inbox.appendingPathComponent(".held.zip")
        let fresh = sandbox.inbox.appendingPathComponent("fresh.zip.tmp")
        for url in [old, held, fresh] { try Data("partial".utf8).write(to: url) }
        age(old, seconds: 7200)
        age(held, seconds: 3600)
        let status = try airlock(["status", "--root", sandbox.root.path])
        expect(status.stdout.contains("temporary:     3 under temporary names") && status.stdout.contains("oldest old.zip.part, last written 72"),
                "\(status.stdout)")
        expect(status.stdout.contains("never removed"))

        let writer = open(held.path, O_WRONLY)
        expect(writer >= 0)
        defer { close(writer) }
        try sandbox.configure("watch", ["abandoned_remove_seconds": 1800, "rescan_seconds": 1])
        let daemon = try RunningDaemon(sandbox)
        // The log line follows the unlink: waited for, not read once the file is gone.
        expect(waitFor(seconds: 20) { daemon.stderr.contains("removed the abandoned upload old.zip.part (7 bytes, last written 7") },
                "\(daemon.stderr)")
        expect(!FileManager.default.fileExists(atPath: old.path))
        expect(FileManager.default.fileExists(atPath: held.path), "a name a writer holds open stays")
        expect(FileManager.default.fileExists(atPath: fresh.path), "a recently written name stays")
        let metrics = sandbox.root.appendingPathComponent("metrics/airlock.prom")
        expect(waitFor(seconds: 5) {
            let text = (try? String(contentsOf: metrics, encoding: .utf8)) ?? ""
            return text.contains("airlock_inbox_temporary_files 2") && text.contains("airlock_abandoned_uploads_removed_total 1")
                && text.contains("airlock_oldest_inbox_temporary_file_age_seconds 36")
        }, "\((try? String(contentsOf: metrics, encoding: .utf8)) ?? "")")
        expect(daemon.events.isEmpty, "no temporary name was taken as a drop")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
    }

    @Test("a legacy SFTP rename caught between its link and its unlink, across rescans, is a rename in progress: accepted once, within a second of the unlink", .needsLeases)
    func linkedRenameAcrossRescans() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["rescan_seconds": 1, "settle_milliseconds": 100])
        let daemon = try RunningDaemon(sandbox)
        let part = sandbox.inbox.appendingPathComponent("x.zip.part"), final = sandbox.inbox.appendingPathComponent("x.zip")
        try Samples.validZip.write(to: part)
        expectEqual(link(part.path, final.path), 0)
        usleep(2_500_000)   // two rescans and many looks while both links stand
        expect(daemon.events.isEmpty, "not taken, and above all not quarantined as a hard link: \(daemon.events)")
        expectEqual(unlink(part.path), 0)
        let unlinked = Date()
        expect(waitFor(seconds: 5) { !FileManager.default.fileExists(atPath: final.path) })
        expect(Date().timeIntervalSince(unlinked) < 1)
        let events = daemon.waitForVerdicts(1)
        expect(events.count == 1 && events.first?.kind == .accepted, "\(events)")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
    }

    @Test("a quota reason names the airlock.json key that sets the limit")
    func quotaReasonNamesKey() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: ["max_drop_bytes": 100])
        try sandbox.drop(Samples.validZip, as: "big.zip")
        let once = try sandbox.runOnce()
        expectEqual(once.events.first?.reason, "drop-too-large")
        let id = try #require(once.events.first?.id)
        let report = try String(contentsOf: sandbox.quarantine.appendingPathComponent(id).appendingPathComponent("report.json"), encoding: .utf8)
        expect(report.contains("policy.max_drop_bytes"), "\(report)")
        expect(once.stderr.contains("policy.max_drop_bytes"), "\(once.stderr)")
    }

    @Test("a cursor never handed out, or one that does not end a record, is called mistyped; the usage names the three-part form")
    func mistypedCursors() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "a.zip")
        _ = try sandbox.runOnce()
        let listed = try airlock(["events", "--root", sandbox.root.path])
        let cursor = try #require(listed.events.last?.cursor)
        let parts = cursor.split(separator: ":").map(String.init)
        let future = "\(parts[0]):\(UInt64(parts[1])! + 1000):\(parts[2])"
        let ahead = try airlock(["events", "--after", future, "--root", sandbox.root.path])
        expect(ahead.status != 0 && ahead.stderr.contains("mistyped") && !ahead.stderr.contains("rotated away"), "\(ahead.stderr)")
        let inside = "\(parts[0]):\(parts[1]):\(Int(parts[2])! - 1)"
        let torn = try airlock(["events", "--after", inside, "--root", sandbox.root.path])
        expect(torn.status != 0 && torn.stderr.contains("mistyped"), "\(torn.stderr)")
        let usage = try airlock(["events", "--after", "nonsense", "--root", sandbox.root.path])
        expect(usage.status == 64 && usage.stderr.contains("1234:1:5678") && usage.stderr.contains("INODE:GENERATION:OFFSET"), "\(usage.stderr)")
        try expectEqual(airlock(["events", "--after", cursor, "--root", sandbox.root.path]).status, 0)
    }
}
