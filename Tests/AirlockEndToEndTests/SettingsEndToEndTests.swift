import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Settings at and past their bounds, and configured paths, through the real binary.
@Suite("Settings end to end: bounds, reloads, durations and configured paths")
struct SettingsEndToEndTests {
    func expectClean(_ outcome: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        for marker in ["Fatal error", "Stack dump", "backtrace", "Swift runtime failure", "overflow"] {
            expect(!outcome.stderr.contains(marker), "\(outcome.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// Every numeric setting at the top of its range, as a configuration section map.
    static func everyMaximum() -> [String: [String: Int64]] {
        [
            "policy": ["max_entries": 1_000_000, "max_file_bytes": 1 << 40, "max_total_bytes": 1 << 40, "max_drop_bytes": 1 << 40,
                       "max_component_bytes": 255, "max_path_bytes": 4096, "max_depth": 255, "max_ratio": 1_000_000,
                       "ratio_min_bytes": 1 << 40],
            "decoder": ["timeout_seconds": 86_400, "address_space_bytes": 1 << 40, "cpu_seconds": 86_400, "open_files": 4096],
            "keyed": ["max_bytes": 256 << 20, "max_items": 1_000_000, "max_text_units": 1_048_576],
            "watch": ["settle_milliseconds": 3_600_000, "max_wait_seconds": 604_800, "rescan_seconds": 86_400, "workers": 1024,
                      "queue_limit": 100_000, "grace_seconds": 3600, "retry_max_seconds": 86_400],
            "journal": ["max_bytes": 1 << 30, "keep": 100],
            "metrics": ["interval_seconds": 86_400],
        ]
    }

    @Test("values past their range are a configuration error before anything is claimed", arguments: [
        ("decoder", "timeout_seconds", 1e11), ("watch", "settle_milliseconds", 1e14), ("watch", "rescan_seconds", 1e11),
        ("journal", "max_bytes", 5e18), ("policy", "max_drop_bytes", 1e300), ("watch", "workers", -1),
    ])
    func pastRange(_ section: String, _ key: String, _ value: Double) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure(section, [key: value])
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        for arguments in [["run", "--once"], ["status"], ["history"], ["quarantine", "list"]] {
            let result = try airlock(arguments + ["--root", sandbox.root.path])
            expectEqual(result.status, 78, "\(arguments): \(result.status) \(result.stderr)")
            expect(result.stderr.contains("\(section).\(key):") && result.stderr.contains("allowed range"), "\(result.stderr)")
            expectClean(result)
        }
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), ["photos.zip"])
        try expect(sandbox.listing(sandbox.claimed) == [] && sandbox.listing(sandbox.staging) == [])
    }

    @Test("every setting at its maximum: run --once, status and history work, the daemon starts, reloads and stops", .needsLeases)
    func everySettingAtItsMaximum() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        for (section, values) in Self.everyMaximum() { try sandbox.configure(section, values) }
        try sandbox.drop(Samples.validZip, as: "first.zip")
        let once = try sandbox.runOnce()
        expectEqual(once.status, 0, "\(once.stderr)")
        expectEqual(once.events.first?.kind, .accepted)
        expectClean(once)
        for arguments in [["status"], ["history"], ["status", "--json"], ["quarantine", "list", "--since", "36500d"],
                          ["quarantine", "purge", "--older-than", "5214w", "--dry-run"]] {
            let result = try airlock(arguments + ["--root", sandbox.root.path])
            expectEqual(result.status, 0, "\(arguments): \(result.stderr)")
            expectClean(result)
        }
        // A drop there at start is taken at once, whatever the settle interval.
        try sandbox.drop(Samples.validZip, as: "second.zip")
        let daemon = try RunningDaemon(sandbox)
        expectEqual(daemon.waitForVerdicts(1).count, 1, "\(daemon.stderr)")
        // A reload past the range is refused and the daemon keeps going on what it had.
        try sandbox.configure("watch", ["settle_milliseconds": 1e14])
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 20) { daemon.stderr.contains("watch.settle_milliseconds: 100000000000000 is outside the allowed range") },
                "\(daemon.stderr)")
        expect(daemon.process.isRunning)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0, "\(daemon.stderr)")
        expect(!daemon.stderr.contains("Fatal error"))
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), ["first", "second"])
    }

    @Test("a reload past a range keeps the running configuration, and drops keep flowing", .needsLeases, arguments: [
        ("watch", "rescan_seconds", 1e11), ("decoder", "timeout_seconds", 1e11), ("metrics", "interval_seconds", 1e300),
    ])
    func reloadPastRange(_ section: String, _ key: String, _ value: Double) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["settle_milliseconds": 100])
        let daemon = try RunningDaemon(sandbox)
        try sandbox.configure(section, [key: value])
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 20) { daemon.stderr.contains("\(section).\(key):") }, "\(daemon.stderr)")
        try sandbox.drop(Samples.validZip, as: "after.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.kind, .accepted, "\(daemon.stderr)")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
        try sandbox.expectInvariants()
    }

    @Test("durations past 36500d are a usage error in one line, and nothing is purged", arguments: [
        ["quarantine", "list", "--since", "99999999999999999w"], ["quarantine", "purge", "--older-than", "9223372036854775807d"],
        ["quarantine", "purge", "--older-than", "36501d"], ["quarantine", "list", "--since", "-1d"],
    ])
    func durations(_ arguments: [String]) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        let result = try airlock(arguments + ["--root", sandbox.root.path])
        expectEqual(result.status, 64)
        expectEqual(result.stderr.split(separator: "\n").count, 1, "\(result.stderr)")
        expect(result.stderr.contains(arguments[2]), "\(result.stderr)")
        expectClean(result)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).count, 1)
    }

    @Test("a configured path inside the places airlock moves drops through is a configuration error", .needsLeases, arguments: [
        "inbox/airlock.prom", "outbox/airlock.prom", "quarantine/airlock.prom", "state/claimed/airlock.prom",
        "state/staging/airlock.prom", "state/journal.jsonl", "airlock.json", "ABSOLUTE/inbox/airlock.prom",
    ])
    func metricsPathInside(_ path: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("metrics", ["path": path.replacingOccurrences(of: "ABSOLUTE", with: sandbox.root.path), "interval_seconds": 1])
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let once = try sandbox.runOnce()
        expectEqual(once.status, 78)
        expect(once.stderr.contains("metrics.path:"), "\(once.stderr)")
        expectClean(once)
        let daemon = try airlock(["run", "--root", sandbox.root.path])
        expectEqual(daemon.status, 78, "\(daemon.stderr)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), ["photos.zip"])
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [])
    }

    @Test("a metrics path into the inbox through a symbolic link, or on reload, is refused too", .needsLeases)
    func metricsPathByLinkAndReload() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let link = sandbox.base.appendingPathComponent("logs/inbox-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: sandbox.inbox)
        try sandbox.configure("metrics", ["path": link.appendingPathComponent("airlock.prom").path])
        try expectEqual(sandbox.runOnce().status, 78)
        try sandbox.configure("metrics", ["path": "state/airlock.prom", "interval_seconds": 1])
        try sandbox.configure("watch", ["settle_milliseconds": 100])
        let daemon = try RunningDaemon(sandbox)
        try sandbox.configure("metrics", ["path": "inbox/airlock.prom", "interval_seconds": 1])
        daemon.signal(SIGHUP)
        expect(waitFor(seconds: 20) { daemon.stderr.contains("metrics.path:") }, "\(daemon.stderr)")
        // Wait for a metrics write after the refused reload: it goes to the path
        // kept, so had the reload taken, the daemon's own file would now be in the inbox.
        let kept = sandbox.root.appendingPathComponent("state/airlock.prom")
        try FileManager.default.removeItem(at: kept)
        expect(waitFor(seconds: 20) { FileManager.default.fileExists(atPath: kept.path) }, "no metrics written since the reload")
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.kind, .accepted)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
        // The daemon never wrote into the inbox, so it never took its own file for a drop.
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [])
        expect(FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("state/airlock.prom").path))
        try sandbox.expectInvariants()
    }

    @Test("a configuration file kept in the inbox is refused")
    func configurationInInbox() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: sandbox.root.appendingPathComponent("airlock.json"))) as! [String: Any]
        config["root"] = sandbox.root.path
        let file = sandbox.inbox.appendingPathComponent("airlock.json")
        try JSONSerialization.data(withJSONObject: config).write(to: file)
        let result = try airlock(["run", "--once", "--config", file.path])
        expectEqual(result.status, 78)
        expect(result.stderr.contains("the configuration file is inside inbox/"), "\(result.stderr)")
        expect(FileManager.default.fileExists(atPath: file.path))
    }
}
