import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("The quarantine for an analyst: aligned wide names, times with their zone, purging several with a reason")
struct QuarantineReviewTests {
    /// Two entries rejected as unsafe-path: one with a CJK name, one ASCII.
    func twoEntries() throws -> (Sandbox, [String]) {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.traversalZip, as: "写真アルバム.zip")
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        let ids = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).sorted()
        expectEqual(ids.count, 2)
        return (sandbox, ids)
    }

    @Test("quarantine list aligns its columns by display width and gives times in UTC")
    func alignedList() throws {
        let (sandbox, _) = try twoEntries()
        let list = try airlock(["quarantine", "list", "--root", sandbox.root.path])
        expectEqual(list.status, 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").map(String.init)
        expectEqual(lines.count, 3)
        func column(_ line: String, _ text: String) -> Int? {
            line.range(of: text).map { displayWidth(String(line[..<$0.lowerBound])) }
        }
        let entryColumn = try #require(column(lines[0], "ENTRY"))
        for line in lines.dropFirst() {
            expectEqual(column(line, "../outside.txt"), entryColumn, "\(line)")
            expect(line.contains(" UTC "), "\(line)")
        }
        expectEqual(displayWidth("写真"), 4)
        expectEqual(displayWidth("e\u{301}"), 1)
    }

    @Test("purge takes several ids and --reason, checks them all first, and journals the reason")
    func purgeSeveral() throws {
        let (sandbox, ids) = try twoEntries()
        let root = ["--root", sandbox.root.path]
        let typo = try airlock(["quarantine", "purge", ids[0], "20200101T000000Z-00000000"] + root)
        expectEqual(typo.status, 65)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).count, 2, "a bad id purges nothing")
        let purged = try airlock(["quarantine", "purge", ids[0], ids[1], ids[0], "--reason", "reviewed: test uploads"] + root)
        expectEqual(purged.status, 0, "\(purged.stderr)")
        try expect(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).isEmpty)
        let records = try airlock(["history", "--json"] + root).events.filter { $0.kind == .purged }
        expectEqual(records.count, 2)
        expect(records.allSatisfy { if case .purged(let purge) = $0 { purge.purgeReason == "reviewed: test uploads" } else { false } })
        expectEqual(Set(records.compactMap { $0.id }), Set(ids))
        try sandbox.expectInvariants()
    }
}
