import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Names of 255 bytes, the most a directory entry holds, whose first choice is taken.
@Suite("Long names: the -2 suffix fits, in the outbox and on release")
struct LongNameTests {
    /// 251 bytes of two-byte characters and ASCII, so a cut can fall inside a character.
    static let stem = "x" + String(repeating: "é", count: 125)

    func names(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test("releasing a drop with a 255-byte name that is taken lands under a shortened name-2.zip")
    func releaseTaken() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let name = Self.stem + ".zip"
        expectEqual(name.utf8.count, 255)
        try sandbox.drop(Samples.traversalZip, as: name)
        try expectEqual(sandbox.runOnce().status, 0)
        let quarantined = try #require(try sandbox.onlyQuarantined())
        // The name is taken again in the inbox when the operator releases.
        try sandbox.drop(Samples.validZip, as: name)
        let release = try airlock(["quarantine", "release", quarantined.id, "--root", sandbox.root.path])
        expectEqual(release.status, 0, "\(release.stderr)")
        let inbox = try names(in: sandbox.inbox)
        expectEqual(inbox.count, 2)
        let released = try #require(inbox.first { $0 != name })
        expect(released.utf8.count <= 255)
        expect(released.hasSuffix("-2.zip"), "\(released)")
        expectEqual(String(validating: Array(released.utf8), as: UTF8.self), released)
        expect(Self.stem.hasPrefix(String(released.dropLast("-2.zip".count))))
        try expectEqual(Data(contentsOf: sandbox.inbox.appendingPathComponent(released)), Samples.traversalZip)
        // Both go through intake: the one under the name to the outbox, the released one back to quarantine.
        let again = try sandbox.runOnce()
        expectEqual(again.status, 0, "\(again.stderr)")
        expectEqual(again.events.compactMap { $0.kind.rawValue }.sorted(), ["accepted", "rejected"])
        try sandbox.expectInvariants()
        try expectEqual(names(in: sandbox.outbox), [Self.stem])
        try expectEqual(names(in: sandbox.quarantine).count, 2)
    }

    @Test("a second drop of a 255-byte name lands in the outbox as a shortened name-2")
    func outboxTaken() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let name = "y" + String(repeating: "€", count: 84) + "z"  // 254 bytes, no archive suffix
        try sandbox.drop(Samples.validZip, as: name)
        try expectEqual(sandbox.runOnce().status, 0)
        try sandbox.drop(Samples.validZip, as: name)
        let second = try sandbox.runOnce()
        expectEqual(second.status, 0, "\(second.stderr)")
        try sandbox.expectInvariants()
        let outbox = try names(in: sandbox.outbox)
        expectEqual(outbox.count, 2)
        expect(outbox.contains(name))
        let numbered = try #require(outbox.first { $0 != name })
        expect(numbered.hasSuffix("-2") && numbered.utf8.count <= 255, "\(numbered)")
        expect(name.hasPrefix(String(numbered.dropLast(2))))
        expectEqual(second.events.first?.output, "outbox/" + numbered)
    }
}
