import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Drop size: judged on fstat before a byte of the drop is read")
struct DropSizeTests {
    @Test("a sparse 20 GiB drop that starts like a ZIP is drop-too-large at once, and never hashed")
    func sparseDrop() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let drop = sandbox.inbox.appendingPathComponent("huge.zip")
        try Data([0x50, 0x4B, 0x03, 0x04]).write(to: drop)
        expectEqual(truncate(drop.path, 20 << 30), 0)
        let started = Date()
        let result = try sandbox.runOnce()
        let seconds = Date().timeIntervalSince(started)
        expectEqual(result.status, 0, "\(result.stderr)")
        // Hashing 20 GiB of holes took about a minute of CPU; judging the size takes nothing.
        expect(seconds < 15, "run --once took \(seconds) s")
        expectEqual(result.events.first?.reason, "drop-too-large")
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        expectEqual(quarantined.report.reason, "drop-too-large")
        expectEqual(quarantined.report.sha256, nil)
        expectEqual(quarantined.report.size, 20 << 30)
        let attributes = try FileManager.default.attributesOfItem(atPath: quarantined.drop.path)
        expectEqual((attributes[.size] as? NSNumber)?.int64Value, 20 << 30, "the original is in quarantine as it was")
        let head = try FileHandle(forReadingFrom: quarantined.drop).read(upToCount: 4)
        expectEqual(head, Data([0x50, 0x4B, 0x03, 0x04]))
        let claimed = try sandbox.journal().filter { $0.kind == .claimed }
        expectEqual(claimed.count, 1)
        if case .claimed(let record)? = claimed.first { expectEqual(record.sha256, nil, "the claim hashed the drop") }
        // inspect judges the size first too.
        let inspectStarted = Date()
        let inspect = try airlock(["inspect", quarantined.drop.path, "--root", sandbox.root.path])
        expectEqual(inspect.status, 65)
        expectEqual(inspect.events.first?.reason, "drop-too-large")
        expect(Date().timeIntervalSince(inspectStarted) < 15)
    }

    @Test("a drop of exactly max_drop_bytes is hashed; one byte over is rejected unhashed", arguments: [0, 1])
    func atTheLimit(_ over: Int) throws {
        let sandbox = try Sandbox()
        let bytes = Samples.traversalZip
        try sandbox.initialise(policy: ["max_drop_bytes": bytes.count - over])
        try sandbox.drop(bytes, as: "evil.zip")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), bytes)
        if over == 0 {
            expectEqual(quarantined.report.reason, "unsafe-path")
            let expected = try sha256Hexes(["drop"], in: quarantined.drop.deletingLastPathComponent())["drop"]
            expectEqual(quarantined.report.sha256, expected)
        } else {
            expectEqual(quarantined.report.reason, "drop-too-large")
            expectEqual(quarantined.report.sha256, nil)
        }
    }

    @Test("a keyed archive over keyed.max_bytes is judged on its size before it is hashed")
    func keyedOverItsLimit() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("keyed", ["max_bytes": 4096])
        var bytes = Data("bplist00".utf8)
        bytes.append(Data(repeating: 0, count: 8192))
        try sandbox.drop(bytes, as: "memo.plist")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        expectEqual(quarantined.report.reason, "drop-too-large")
        expect(quarantined.report.format != nil)
        expectEqual(quarantined.report.sha256, nil)
        try expectEqual(Data(contentsOf: quarantined.drop), bytes)
    }
}
