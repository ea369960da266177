import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Consumers (outbox.group) follow the event feed, as the design gives it to them,
/// and read nothing else of the root's private parts; checked as real users.
@Suite("Consumers read the event feed and nothing else of state/; others are refused with 77",
       .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct FeedAccessTests {
    init() throws { try Parties.require() }

    /// `airlock ARGUMENTS --root ROOT` as `user`.
    static func airlockAs(_ user: String, _ arguments: String, _ root: String) throws -> (status: Int32, output: String) {
        try Parties.run(user, #"exec "$1" "# + arguments + #" --root "$2""#, [Binary.airlock, root])
    }

    @Test("a consumer follows the feed across rotation and resumes from a cursor; cannot list state/ or open claims, the lock, the inbox or the quarantine")
    func consumerReadsTheFeedOnly() throws {
        let sandbox = try Sandbox()
        try PermissionTests.layOut(sandbox)
        try sandbox.configure("journal", ["max_bytes": 600, "keep": 10])
        try sandbox.configure("policy", ["max_entries": 1])
        let root = sandbox.root.path
        let zip = Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip").path
        try PermissionTests.allowed(Parties.producer, "drop", #"cat "$1" > "$2/one.zip" && cat "$1" > "$2/two.zip""#, [zip, sandbox.inbox.path])
        let ran = try Parties.run(Parties.service, #"umask 077; exec "$1" run --once --root "$2""#, [Binary.airlock, root])
        expectEqual(ran.status, 0, "\(ran.output)")

        var st = stat()
        try #require(lstat(root + "/state", &st) == 0)
        let consumers = try #require(getgrnam(Parties.consumers)).pointee.gr_gid
        expect(st.st_mode & 0o7777 == 0o710 && st.st_gid == consumers, "state/: \(String(st.st_mode & 0o7777, radix: 8)) gid \(st.st_gid)")
        let journals = try FileManager.default.contentsOfDirectory(atPath: root + "/state").filter { $0.hasSuffix(".jsonl") }
        expect(journals.count > 1, "the journal rotated: \(journals)")
        for name in journals + ["journal.generations"] {
            try #require(lstat(root + "/state/" + name, &st) == 0, "\(name)")
            expect(st.st_mode & 0o777 == 0o640 && st.st_gid == consumers, "\(name): \(String(st.st_mode & 0o777, radix: 8)) gid \(st.st_gid)")
        }

        let events = try Self.airlockAs(Parties.consumer, "events", root)
        expectEqual(events.status, 0, "\(events.output)")
        let lines = events.output.split(separator: "\n").filter { $0.hasPrefix("{") }
        expectEqual(lines.filter { $0.contains(#""event":"rejected""#) }.count, 2, "\(events.output)")
        let firstCursor = try #require(lines.first.flatMap { Event.lines(String($0)).first?.cursor })
        let resumed = try Self.airlockAs(Parties.consumer, "events --after \(firstCursor)", root)
        expect(resumed.status == 0 && resumed.output.split(separator: "\n").filter { $0.hasPrefix("{") }.count == lines.count - 1,
                "\(resumed.output)")

        let cons = Parties.consumer
        try PermissionTests.refused(cons, "list state/", #"ls "$1/state""#, [root])
        try PermissionTests.refused(cons, "open the claims", #"ls "$1/state/claimed""#, [root])
        try PermissionTests.refused(cons, "open staging", #"ls "$1/state/staging""#, [root])
        try PermissionTests.refused(cons, "read the layout file", #"cat "$1/state/layout""#, [root])
        try PermissionTests.refused(cons, "read the run lock", #"cat "$1/state/airlock.pid""#, [root])
        try PermissionTests.refused(cons, "read the journal lock", #"cat "$1/state/journal.lock""#, [root])
        try PermissionTests.refused(cons, "append to the journal", #"echo '{}' >> "$1/state/journal.jsonl""#, [root])
        try PermissionTests.refused(cons, "create a file in state/", #"touch "$1/state/x""#, [root])
        try PermissionTests.refused(cons, "list the inbox", #"ls "$1/inbox""#, [root])
        try PermissionTests.refused(cons, "list the quarantine", #"ls "$1/quarantine""#, [root])
        let status = try Self.airlockAs(cons, "status", root)
        expectEqual(status.status, 77, "\(status.output)")
        try sandbox.expectInvariants()
    }

    @Test("a user outside outbox.group gets 77 naming the group; without outbox.group, init takes the feed back")
    func othersAreRefused() throws {
        let sandbox = try Sandbox()
        try PermissionTests.layOut(sandbox)
        let root = sandbox.root.path
        let ran = try Parties.run(Parties.service, #"umask 077; exec "$1" run --once --root "$2""#, [Binary.airlock, root])
        expectEqual(ran.status, 0, "\(ran.output)")
        try PermissionTests.allowed(Parties.service, "write a record", #"exec "$1" quarantine purge --older-than 1d --root "$2""#,
                                    [Binary.airlock, root])
        try expectEqual(Self.airlockAs(Parties.consumer, "events", root).status, 0)

        let producer = try Self.airlockAs(Parties.producer, "events", root)
        expectEqual(producer.status, 77, "\(producer.output)")
        expect(producer.output.contains("permission denied: \(root)/state/journal.jsonl") && producer.output.contains(#"outbox.group ("\#(Parties.consumers)")"#),
                "\(producer.output)")

        try sandbox.configure("outbox", ["group": ""])
        let initialised = try Parties.run(Parties.service, #"exec "$1" init --root "$2""#, [Binary.airlock, root])
        expectEqual(initialised.status, 0, "\(initialised.output)")
        var st = stat()
        try #require(lstat(root + "/state", &st) == 0)
        expectEqual(st.st_mode & 0o7777, 0o700)
        let revoked = try Self.airlockAs(Parties.consumer, "events", root)
        expectEqual(revoked.status, 77, "\(revoked.output)")
    }
}
