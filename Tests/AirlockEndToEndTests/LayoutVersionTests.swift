import AirlockTestSupport
import Foundation
import Testing

@Suite("A root records its layout version: a newer one is refused, an older one upgraded in place by init")
struct LayoutVersionTests {
    var layoutFile: (Sandbox) -> URL = { $0.root.appendingPathComponent("state/layout") }

    @Test("init records the current layout; a root from a newer airlock is refused by every command, init included")
    func newerRefused() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try expectEqual(String(contentsOf: layoutFile(sandbox), encoding: .utf8), "2\n")
        try "3\n".write(to: layoutFile(sandbox), atomically: true, encoding: .utf8)
        for arguments in [["status"], ["run", "--once"], ["init"], ["quarantine", "list"]] {
            let result = try airlock(arguments + ["--root", sandbox.root.path])
            expectEqual(result.status, 78, "\(arguments): \(result.stderr)")
            expect(result.stderr.contains("laid out by a newer airlock (layout 3; this airlock knows layouts up to 2)"), "\(result.stderr)")
        }
        try expectEqual(String(contentsOf: layoutFile(sandbox), encoding: .utf8), "3\n", "a newer root is left as it is")
    }

    @Test("a root from before the version was recorded still works, and init upgrades it in place, keeping what it holds")
    func olderUpgraded() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip")), as: "a.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        try FileManager.default.removeItem(at: layoutFile(sandbox))
        try expectEqual(airlock(["status", "--root", sandbox.root.path]).status, 0)
        let upgraded = try airlock(["init", "--root", sandbox.root.path])
        expectEqual(upgraded.status, 0)
        expect(upgraded.stderr.contains("layout 1 upgraded in place to 2"), "\(upgraded.stderr)")
        try expectEqual(String(contentsOf: layoutFile(sandbox), encoding: .utf8), "2\n")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["a"])
        let again = try airlock(["init", "--root", sandbox.root.path])
        expect(again.stderr.contains("already laid out"), "\(again.stderr)")
        try sandbox.expectInvariants()
    }
}
