import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Inbox entries the service user cannot move or read, made with real distinct
/// uids: airlock runs as `service` (not root, so permissions bind it) and the
/// entries belong to `stranger`. CI runs the tests as root, which sets this up.
@Suite("Entries airlock cannot move or read: handled once, never blocking the others", .serialized,
       .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                "needs root (to own files as other users) and setpriv (package util-linux)"))
struct StuckEntryTests {
    static let service: uid_t = 4242
    static let stranger: uid_t = 4343
    /// Runs a command as the service user, its group, no other groups.
    static let asService = ["/usr/bin/setpriv", "--reuid=\(service)", "--regid=\(service)", "--clear-groups", "--"]
    /// The daemon as the service user with CAP_LEASE alone (without it, it would not
    /// start): a lease on others' files, and still no reading of a mode-000 drop.
    static let asLeasingService = ["/usr/bin/setpriv", "--reuid=\(service)", "--regid=\(service)", "--clear-groups",
                                   "--inh-caps=+lease", "--ambient-caps=+lease", "--"]

    /// A root owned by the service user with a sticky, world-writable inbox owned
    /// by `inboxOwner`, as a shared drop box is.
    func makeRoot(inboxOwner: uid_t) throws -> Sandbox {
        try #require(getuid() == 0, "these tests create files of other users and need root (CI runs as root)")
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["settle_milliseconds": 100, "rescan_seconds": 1])
        expectEqual(chmod(sandbox.base.path, 0o755), 0)
        try chownTree(sandbox.root, Self.service)
        expectEqual(chown(sandbox.inbox.path, inboxOwner, inboxOwner), 0)
        expectEqual(chmod(sandbox.inbox.path, 0o1777), 0)
        return sandbox
    }

    func chownTree(_ url: URL, _ user: uid_t) throws {
        expectEqual(chown(url.path, user, user), 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
            let child = url.appendingPathComponent(name)
            var st = stat()
            guard lstat(child.path, &st) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR { try chownTree(child, user) } else { expectEqual(lchown(child.path, user, user), 0) }
        }
    }

    func place(_ data: Data, _ name: String, in sandbox: Sandbox, owner: uid_t, mode: mode_t) throws {
        let url = sandbox.inbox.appendingPathComponent(name)
        try data.write(to: url)
        expectEqual(chown(url.path, owner, owner), 0)
        expectEqual(chmod(url.path, mode), 0)
    }

    func verdicts(_ events: [Event]) -> [String: String] {
        var result: [String: String] = [:]
        for event in events { result[event.drop] = event.reason ?? event.kind.rawValue }
        return result
    }

    @Test("run --once: a stranger's directory, or a stranger's file in a sticky inbox not airlock's, is skipped once; a mode-000 drop is quarantined; the rest go through",
          arguments: [(Self.service, "directory"), (0, "file")])
    func once(_ inboxOwner: uid_t, _ stuckKind: String) throws {
        let sandbox = try makeRoot(inboxOwner: inboxOwner)
        let stuck = sandbox.inbox.appendingPathComponent("sub.zip")
        if stuckKind == "directory" {
            try FileManager.default.createDirectory(at: stuck, withIntermediateDirectories: false)
            expectEqual(chown(stuck.path, Self.stranger, Self.stranger), 0)
            expectEqual(chmod(stuck.path, 0o755), 0)
        } else {
            try place(Samples.validZip, "sub.zip", in: sandbox, owner: Self.stranger, mode: 0o644)
        }
        // In a sticky inbox the service user does not own, it can move only its own files.
        let lockedOwner = inboxOwner == Self.service ? Self.stranger : Self.service
        try place(Samples.validZip, "locked.zip", in: sandbox, owner: lockedOwner, mode: 0)
        for name in ["a.zip", "z.zip"] { try place(Samples.validZip, name, in: sandbox, owner: Self.service, mode: 0o644) }
        try place(Samples.traversalZip, "evil.zip", in: sandbox, owner: Self.service, mode: 0o644)

        let first = try airlock(["run", "--once", "--root", sandbox.root.path], under: Self.asService)
        expectEqual(first.status, 0, "\(first.stderr)")
        expectEqual(verdicts(first.events), ["sub.zip": "skipped", "locked.zip": "unreadable-drop", "a.zip": "accepted",
                                           "z.zip": "accepted", "evil.zip": "unsafe-path"], "\(first.stdout)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), ["sub.zip"])
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), ["a", "z"])
        try expect(sandbox.listing(sandbox.claimed) == [] && sandbox.listing(sandbox.staging) == [])
        // The unreadable drop is in quarantine as it was: its bytes and its mode.
        let locked = try #require(try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).first { id in
            try Report.read(sandbox.quarantine.appendingPathComponent("\(id)/report.json")).reason == "unreadable-drop"
        })
        let original = sandbox.quarantine.appendingPathComponent("\(locked)/drop")
        try expectEqual(Data(contentsOf: original), Samples.validZip)
        var st = stat()
        expect(stat(original.path, &st) == 0 && st.st_mode & 0o7777 == 0 && st.st_uid == lockedOwner)
        // inspect reaches the same verdict.
        let inspect = try airlock(["inspect", original.path, "--root", sandbox.root.path], under: Self.asService)
        expect(inspect.status == 65 && inspect.events.first?.reason == "unreadable-drop", "\(inspect.stderr)")

        // Reported once: a second run says nothing more, the journal holds one record.
        let second = try airlock(["run", "--once", "--root", sandbox.root.path], under: Self.asService)
        expect(second.status == 0 && second.events.isEmpty, "\(second.stdout)")
        expect(!second.stderr.contains("skipping"))
        try expectEqual(sandbox.journal().filter { $0.kind == .skipped }.count, 1)
        // status names it, in text and JSON.
        let status = try airlock(["status", "--root", sandbox.root.path], under: Self.asService)
        expect(status.stdout.contains("stuck:         sub.zip: cannot be moved out of the inbox"), "\(status.stdout)")
        let json = try airlock(["status", "--json", "--root", sandbox.root.path], under: Self.asService)
        let stuckList = json.document(StatusDocument.self)?.stuck.map(\.drop)
        expectEqual(stuckList, ["sub.zip"], "\(json.stdout)")

        // Once its owner makes it movable it is an entry like any other, and handled.
        if stuckKind == "directory" {
            expectEqual(chmod(stuck.path, 0o777), 0)
        } else {
            expectEqual(chown(stuck.path, Self.service, Self.service), 0)
        }
        let third = try airlock(["run", "--once", "--root", sandbox.root.path], under: Self.asService)
        expectEqual(third.status, 0, "\(third.stderr)")
        expectEqual(verdicts(third.events), ["sub.zip": stuckKind == "directory" ? "not-regular-file" : "accepted"], "\(third.stdout)")
        let after = try airlock(["status", "--root", sandbox.root.path], under: Self.asService)
        expect(!after.stdout.contains("stuck:"), "\(after.stdout)")
        try sandbox.expectInvariants()
    }

    @Test("the daemon reports a stuck entry once, keeps taking drops, and quarantines a mode-000 drop", .needsLeases)
    func daemon() throws {
        let sandbox = try makeRoot(inboxOwner: Self.service)
        let stuck = sandbox.inbox.appendingPathComponent("sub.zip")
        try FileManager.default.createDirectory(at: stuck, withIntermediateDirectories: false)
        expectEqual(chown(stuck.path, Self.stranger, Self.stranger), 0)
        let daemon = try RunningDaemon(sandbox, under: Self.asLeasingService)
        expect(waitFor(seconds: 20) { daemon.events.contains { $0.kind == .skipped } }, "\(daemon.stderr)")
        try place(Samples.validZip, "locked.zip", in: sandbox, owner: Self.stranger, mode: 0)
        for name in ["later-1.zip", "later-2.zip"] { try place(Samples.validZip, name, in: sandbox, owner: Self.service, mode: 0o644) }
        let finished = daemon.waitForVerdicts(4)
        expectEqual(verdicts(finished), ["sub.zip": "skipped", "locked.zip": "unreadable-drop", "later-1.zip": "accepted", "later-2.zip": "accepted"],
                "\(daemon.stderr)")
        // Several rescans later it has still been reported only once. A directory
        // raises neither of the events the watch follows, so only a rescan finds it:
        // each stranger's probe directory reported is one more rescan done.
        for probe in ["probe-1", "probe-2", "probe-3"] {
            let url = sandbox.inbox.appendingPathComponent(probe)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            expectEqual(chown(url.path, Self.stranger, Self.stranger), 0)
            try #require(waitFor(seconds: 20) { daemon.events.contains { $0.drop == probe } },
                         "no rescan found \(probe): \(daemon.stderr)")
            try FileManager.default.removeItem(at: url)
        }
        expectEqual(daemon.events.filter { $0.kind == .skipped && $0.drop == "sub.zip" }.count, 1)
        expectEqual(daemon.stderr.components(separatedBy: "skipping sub.zip").count, 2, "\(daemon.stderr)")
        expect(!daemon.stderr.contains("retrying"))
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), ["sub.zip"])
        try FileManager.default.removeItem(at: stuck)
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), ["later-1", "later-2"])
    }

    @Test("an inbox the service user cannot write is a fault of the set-up: the run stops, nothing is reported as stuck")
    func unwritableInbox() throws {
        let sandbox = try makeRoot(inboxOwner: 0)
        expectEqual(chmod(sandbox.inbox.path, 0o755), 0)
        try place(Samples.validZip, "photos.zip", in: sandbox, owner: Self.service, mode: 0o644)
        let result = try airlock(["run", "--once", "--root", sandbox.root.path], under: Self.asService)
        expectEqual(result.status, 74, "\(result.stderr)")
        expect(result.events.isEmpty, "\(result.stdout)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), ["photos.zip"])
        try expect(sandbox.listing(sandbox.claimed) == [] && sandbox.listing(sandbox.staging) == [])
    }
}
