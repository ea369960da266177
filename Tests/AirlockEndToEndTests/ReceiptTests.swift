import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// receipts.enabled: each producer learns its drops' outcomes, and only its own.
@Suite("Receipts: one per decided drop, readable by its uploader alone, schema-checked, expired by age",
       .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct ReceiptTests {
    init() throws { try Parties.require() }

    static func uid(_ user: String) throws -> UInt32 { try #require(getpwnam(user)).pointee.pw_uid }

    /// A root laid out for the parties with receipts on; `drops` (name, bytes, producer) dropped, then one run as the service.
    static func intake(_ sandbox: Sandbox, _ drops: [(String, Data, String)]) throws {
        try PermissionTests.layOut(sandbox)
        try sandbox.configure("receipts", ["enabled": true, "max_age_seconds": 3600])
        for (name, data, producer) in drops {
            let file = sandbox.logs.appendingPathComponent(name)
            try data.write(to: file)
            expect(chmod(sandbox.logs.path, 0o755) == 0 && chmod(file.path, 0o644) == 0)
            try PermissionTests.allowed(producer, "drop \(name)", #"cat "$1" > "$2/$3""#, [file.path, sandbox.inbox.path, name])
        }
        let ran = try Parties.run(Parties.service, #"umask 077; exec "$1" run --once --root "$2""#, [Binary.airlock, sandbox.root.path])
        expectEqual(ran.status, 0, "\(ran.output)")
    }

    @Test("accepted and rejected drops get receipts their uploader reads; other producers, consumers and the listing of receipts/ are refused")
    func onlyTheUploaderReads() throws {
        let sandbox = try Sandbox()
        let (prod, other) = (Parties.producer, Parties.otherProducer)
        try Self.intake(sandbox, [("good.zip", Samples.validZip, prod), ("evil.zip", Samples.traversalZip, prod), ("theirs.zip", Samples.validZip, other)])
        let mine = sandbox.root.appendingPathComponent("receipts/\(try Self.uid(prod))")
        let names = try FileManager.default.contentsOfDirectory(atPath: mine.path).sorted()
        expect(names.count == 2 && names.allSatisfy { $0.hasSuffix(".json") }, "\(names)")

        let schema = try FieldSchema()
        var outcomes: [String: Receipt] = [:]
        for name in names {
            let read = try Parties.run(prod, #"cat "$1""#, [mine.appendingPathComponent(name).path])
            expectEqual(read.status, 0, "the uploader reads its receipt: \(read.output)")
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: Any])
            for violation in schema.violations(fields, "receipt") { Issue.record(Comment(rawValue: violation)) }
            // Receipt has only receipt_version, id, drop, time, event and reason: no internal detail.
            let receipt = try JSONDecoder().decode(Receipt.self, from: Data(read.output.utf8))
            expectEqual(receipt.id, String(name.dropLast(".json".count)))
            outcomes[receipt.drop] = receipt
        }
        expect(outcomes["good.zip"]?.event == .accepted && outcomes["good.zip"]?.reason == nil)
        expect(outcomes["evil.zip"]?.event == .rejected && outcomes["evil.zip"]?.reason == "unsafe-path")
        try PermissionTests.allowed(prod, "list its receipts", #"ls "$1" >/dev/null"#, [mine.path])

        let receipts = sandbox.root.appendingPathComponent("receipts").path
        try PermissionTests.refused(other, "list another producer's receipts", #"ls "$1""#, [mine.path])
        try PermissionTests.refused(other, "read another producer's receipt", #"cat "$1""#, [mine.appendingPathComponent(names[0]).path])
        try PermissionTests.refused(Parties.consumer, "read a producer's receipt", #"cat "$1""#, [mine.appendingPathComponent(names[0]).path])
        try PermissionTests.refused(prod, "list every producer's receipts", #"ls "$1""#, [receipts])
        try PermissionTests.refused(prod, "write a receipt", #"echo x > "$1/forged.json""#, [mine.path])
        let theirs = try FileManager.default.contentsOfDirectory(atPath: receipts + "/\(try Self.uid(other))")
        expectEqual(theirs.count, 1)
        try sandbox.expectInvariants()
    }

    @Test("receipts older than receipts.max_age_seconds are removed at the next run; newer ones and the uid directory stay")
    func expiry() throws {
        let sandbox = try Sandbox()
        try Self.intake(sandbox, [("old.zip", Samples.validZip, Parties.producer)])
        let mine = sandbox.root.appendingPathComponent("receipts/\(try Self.uid(Parties.producer))")
        let old = try #require(try FileManager.default.contentsOfDirectory(atPath: mine.path).first)
        try expectEqual(runTool("/usr/bin/touch", ["-d", "2 hours ago", mine.appendingPathComponent(old).path]).status, 0)
        try PermissionTests.allowed(Parties.producer, "drop again", #"cat "$1" > "$2/new.zip""#,
                                    [Samples.fixture("zip-deflate-valid.zip").path, sandbox.inbox.path])
        let ran = try Parties.run(Parties.service, #"umask 077; exec "$1" run --once --root "$2""#, [Binary.airlock, sandbox.root.path])
        expect(ran.status == 0 && ran.output.contains("removed 1 receipt older than receipts.max_age_seconds"), "\(ran.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: mine.path)
        expect(left.count == 1 && !left.contains(old), "\(left)")
    }

    @Test("receipts are off by default: no receipts/ at all")
    func offByDefault() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "a.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("receipts").path))
    }
}
