import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Consumers read the outbox and acknowledge what they have processed in their
/// group's `acks/GROUP/`; only airlock creates, renames or removes anything in
/// `outbox/`, and one entry cannot keep the sweep from removing the others.
@Suite("Hand-back by acknowledgement, with real users: no planting, no forging, no acknowledging ahead, no stalling",
       .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct HandBackTests {
    init() throws { try Parties.require() }

    /// The drop id an entry's manifest gives.
    static func id(of entry: URL) throws -> String {
        try Manifest.read(in: entry).id
    }

    /// A deployed root (PermissionTests.layOut: two acknowledging groups) holding
    /// one accepted entry per name, taken in by the service user.
    func landed(_ names: [String]) throws -> Sandbox {
        let sandbox = try Sandbox()
        try PermissionTests.layOut(sandbox)
        for name in names { try sandbox.drop(Samples.validZip, as: name + ".zip") }
        let ran = try service(#"umask 077; exec "$1" run --once --root "$2""#, sandbox)
        expectEqual(ran.status, 0, "\(ran.output)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), names.sorted(), "\(ran.output)")
        return sandbox
    }

    func service(_ script: String, _ sandbox: Sandbox) throws -> (status: Int32, output: String) {
        try Parties.run(Parties.service, script, [Binary.airlock, sandbox.root.path])
    }

    func sweep(_ sandbox: Sandbox) throws -> (status: Int32, output: String) {
        try service(#"exec "$1" outbox sweep --root "$2""#, sandbox)
    }

    func acknowledge(_ user: String, _ group: String, _ id: String, in sandbox: Sandbox) throws {
        try PermissionTests.allowed(user, "acknowledge \(id) for \(group)", #"touch "$1/acks/$2/$3""#, [sandbox.root.path, group, id])
    }

    @Test("a consumer cannot create, rename or remove anything in the outbox, so it cannot plant an entry for another")
    func cannotPlant() throws {
        let sandbox = try landed(["report"])
        let outbox = sandbox.outbox.path
        let consumer = Parties.consumer
        try PermissionTests.refused(consumer, "create an entry", #"mkdir "$1/invoice""#, [outbox])
        try PermissionTests.refused(consumer, "create a file in the outbox", #"echo '{}' > "$1/.airlock:manifest.json""#, [outbox])
        try PermissionTests.refused(consumer, "link into the outbox", #"ln -s /etc "$1/etc""#, [outbox])
        try PermissionTests.refused(consumer, "rename an entry", #"mv "$1/report" "$1/report-2""#, [outbox])
        try PermissionTests.refused(consumer, "remove an entry", #"rm -rf "$1/report""#, [outbox])
        try PermissionTests.refused(consumer, "write into acks/", #"touch "$1/acks/x""#, [sandbox.root.path])
        try PermissionTests.refused(consumer, "list its group's acknowledgements", #"ls "$1/acks/$2""#,
                                    [sandbox.root.path, Parties.consumers])
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: outbox), ["report"])
        var st = stat()
        expectEqual(lstat(sandbox.root.appendingPathComponent("acks/\(Parties.consumers)").path, &st), 0)
        expect(st.st_mode & 0o7777 == 0o1730 && st.st_gid == getgrnam(Parties.consumers).pointee.gr_gid)
        try sandbox.expectInvariants()
    }

    @Test("a consumer cannot forge or remove another group's acknowledgement; every group must acknowledge before the sweep removes")
    func cannotForgeOrRemove() throws {
        let sandbox = try landed(["report"])
        let id = try Self.id(of: sandbox.outbox.appendingPathComponent("report"))
        let root = sandbox.root.path
        try PermissionTests.refused(Parties.consumer, "acknowledge for another group", #"touch "$1/acks/$2/$3""#,
                                    [root, Parties.otherConsumers, id])
        try acknowledge(Parties.otherConsumer, Parties.otherConsumers, id, in: sandbox)
        try PermissionTests.refused(Parties.consumer, "remove another group's acknowledgement", #"rm -f "$1/acks/$2/$3""#,
                                    [root, Parties.otherConsumers, id])
        try PermissionTests.refused(Parties.consumer, "replace another group's acknowledgement",
                                    #"touch "$1/acks/$2/.x"; mv -f "$1/acks/$2/.x" "$1/acks/$3/$4"; s=$?; rm -f "$1/acks/$2/.x"; exit $s"#,
                                    [root, Parties.consumers, Parties.otherConsumers, id])
        expect(FileManager.default.fileExists(atPath: "\(root)/acks/\(Parties.otherConsumers)/\(id)"))

        let waiting = try sweep(sandbox)
        expectEqual(waiting.status, 0, "\(waiting.output)")
        expect(waiting.output.contains("removed 0, 1 waiting"), "one group has not acknowledged yet: \(waiting.output)")
        try acknowledge(Parties.consumer, Parties.consumers, id, in: sandbox)
        let swept = try sweep(sandbox)
        expectEqual(swept.status, 0, "\(swept.output)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
        for group in [Parties.consumers, Parties.otherConsumers] {
            try expectEqual(FileManager.default.contentsOfDirectory(atPath: "\(root)/acks/\(group)"), [], "acknowledgements removed with the entry")
        }
        try sandbox.expectInvariants()
    }

    @Test("an acknowledgement made before its entry landed is ignored, even backdated or postdated, until made again")
    func cannotAcknowledgeAhead() throws {
        let sandbox = try Sandbox()
        try PermissionTests.layOut(sandbox)
        try sandbox.drop(Samples.validZip, as: "early.zip")
        // A deferred drop keeps its id while it waits: the id is known before the entry exists.
        let deferred = try service(#"AIRLOCK_TEST_DECODER_FAULT=drop-eio exec "$1" run --once --root "$2""#, sandbox)
        // Standard error is mixed in: only the lines that are JSON objects are events.
        let printed = deferred.output.split(separator: "\n").filter { $0.hasPrefix("{") }.joined(separator: "\n")
        let event = try #require(Event.lines(printed).first { $0.kind == .deferred }, "\(deferred.output)")
        let id = try #require(event.id)
        try acknowledge(Parties.consumer, Parties.consumers, id, in: sandbox)
        try PermissionTests.allowed(Parties.otherConsumer, "acknowledge ahead, dated in the future", #"touch -d '+1 day' "$1/acks/$2/$3""#,
                                    [sandbox.root.path, Parties.otherConsumers, id])
        sleep(1)
        let healthy = try service(#"exec "$1" run --once --root "$2""#, sandbox)
        expect(healthy.output.contains("\"accepted\""), "\(healthy.output)")

        let early = try sweep(sandbox)
        expectEqual(early.status, 0, "\(early.output)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["early"], "\(early.output)")
        expect(early.output.contains("did not change after its entry landed"), "\(early.output)")

        try acknowledge(Parties.consumer, Parties.consumers, id, in: sandbox)
        try acknowledge(Parties.otherConsumer, Parties.otherConsumers, id, in: sandbox)
        let swept = try sweep(sandbox)
        expectEqual(swept.status, 0, "\(swept.output)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
        try sandbox.expectInvariants()
    }

    @Test("an entry the sweep cannot remove, and a name airlock did not make, are reported; every other entry is removed")
    func cannotStall() throws {
        let sandbox = try landed(["a", "b", "c"])
        // Something in b that the service cannot remove (root's, in a directory of root's).
        let stuck = sandbox.outbox.appendingPathComponent("b/stuck")
        try FileManager.default.createDirectory(at: stuck, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: stuck.appendingPathComponent("file"))
        for name in ["a", "b", "c"] {
            let id = try Self.id(of: sandbox.outbox.appendingPathComponent(name))
            try acknowledge(Parties.consumer, Parties.consumers, id, in: sandbox)
            try acknowledge(Parties.otherConsumer, Parties.otherConsumers, id, in: sandbox)
        }
        // A name in the outbox that airlock did not make (a consumer's, from before the upgrade).
        let planted = sandbox.outbox.appendingPathComponent("planted")
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: false)
        let consumer = getpwnam(Parties.consumer).pointee
        expectEqual(chown(planted.path, consumer.pw_uid, consumer.pw_gid), 0)

        let swept = try sweep(sandbox)
        expectEqual(swept.status, 74, "\(swept.output)")
        expect(swept.output.contains("outbox/b could not be removed"), "\(swept.output)")
        expect(swept.output.contains("outbox/planted could not be removed: not an entry airlock made"), "\(swept.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted()
        expectEqual(left, ["b", "planted"], "a and c removed whatever b and planted did: \(left)")
        try FileManager.default.removeItem(at: stuck)
        let again = try sweep(sandbox)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["planted"],
                "b, half removed, keeps its manifest and its acknowledgements count on the next sweep: \(again.output)")
    }

    @Test("a root of the previous layout is upgraded in place: outbox write taken away, acks/ made, dot-named hand-backs removed even when one cannot be")
    func upgradeInPlace() throws {
        let sandbox = try landed(["kept", "returned", "blocked"])
        let outbox = sandbox.outbox.path
        // The previous layout: consumers wrote the outbox and handed back by renaming.
        _ = try runTool("/bin/chmod", ["0770", outbox])
        _ = try runTool("/bin/rm", ["-rf", sandbox.root.appendingPathComponent("acks").path])
        try PermissionTests.allowed(Parties.consumer, "hand back by renaming (previous layout)", #"mv "$1/returned" "$1/.returned""#, [outbox])
        try PermissionTests.allowed(Parties.consumer, "hand back by renaming (previous layout)", #"mv "$1/blocked" "$1/.blocked""#, [outbox])
        // The stall of the previous layout: a directory in a handed-back entry the service cannot enter.
        try PermissionTests.allowed(Parties.consumer, "plant a directory the service cannot enter",
                                    #"mkdir -p "$1/.x/l" && chmod 000 "$1/.x/l""#, [outbox])

        let upgraded = try service(#"exec "$1" init --root "$2""#, sandbox)
        expectEqual(upgraded.status, 0, "\(upgraded.output)")
        var st = stat()
        expect(lstat(outbox, &st) == 0 && st.st_mode & 0o7777 == 0o750, "outbox mode \(String(st.st_mode & 0o7777, radix: 8))")
        for group in [Parties.consumers, Parties.otherConsumers] {
            expect(lstat(sandbox.root.appendingPathComponent("acks/\(group)").path, &st) == 0 && st.st_mode & 0o7777 == 0o1730, "\(upgraded.output)")
        }
        try PermissionTests.refused(Parties.consumer, "rename an entry after the upgrade", #"mv "$1/kept" "$1/.kept""#, [outbox])

        let swept = try sweep(sandbox)
        expectEqual(swept.status, 74, "the entry it could not remove is reported: \(swept.output)")
        expect(swept.output.contains("outbox/.x could not be removed"), "\(swept.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: outbox).sorted()
        expectEqual(left, [".x", "kept"], "both renamed hand-backs removed despite .x: \(left)")
        try sandbox.expectInvariants()
    }
}
