import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("quarantine contents: what a rejected archive holds, listed by the confined decoder, never extracted")
struct QuarantineContentsTests {
    /// `fixture` dropped and quarantined; the sandbox and the entry's id.
    func quarantined(_ fixture: String, as name: String? = nil) throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Data(contentsOf: Samples.fixture(fixture)), as: name ?? fixture)
        try expectEqual(sandbox.runOnce().status, 0)
        let id = try #require(try sandbox.onlyQuarantined()?.id)
        return (sandbox, id)
    }

    @Test("each entry with its escaped name, type, size and link target; nothing written", arguments: [
        ("zip-traversal.zip", [["entry": "ok.txt", "entry_type": "file"], ["entry": "../outside.txt", "entry_type": "file"]]),
        ("tar-symlink-then-file.tar", [["entry": "x", "entry_type": "symbolic link", "link_target": "/etc"],
                                       ["entry": "x/passwd", "entry_type": "file"]]),
        ("zip-control-char.zip", [["entry": "ok.txt", "entry_type": "file"], ["entry": "docs/a\\x01b.txt", "entry_type": "file"]]),
    ])
    func listed(_ fixture: String, _ expected: [[String: String]]) throws {
        let (sandbox, id) = try quarantined(fixture)
        let before = try sandbox.listing(sandbox.base)
        let result = try airlock(["quarantine", "contents", id, "--json", "--root", sandbox.root.path])
        expectEqual(result.status, 0, "\(result.stderr)")
        let entries = result.documents(ContentsEntry.self)
        expectEqual(entries.count, expected.count, "\(result.stdout)")
        for (entry, wanted) in zip(entries, expected) {
            for (key, value) in wanted { expectEqual(entry.texts[key], value, "\(entry)") }
            if entry.entryType == "file" { expect(entry.entrySize != nil) }
        }
        let text = try airlock(["quarantine", "contents", id, "--root", sandbox.root.path])
        expect(text.stdout.hasPrefix("TYPE"))
        expect(text.stdout.contains("\(expected.count) entries in this"))
        try expectEqual(sandbox.listing(sandbox.base), before, "listing wrote something")
        try sandbox.expectInvariants()
    }

    @Test("an archive with more entries than the policy allows is still listed whole")
    func manyEntries() throws {
        let (sandbox, id) = try quarantined("zip-1001-entries.zip")
        let result = try airlock(["quarantine", "contents", id, "--root", sandbox.root.path])
        expectEqual(result.status, 0, "\(result.stderr)")
        expect(result.stdout.contains("1001 entries in this zip archive"), "\(result.stdout.suffix(200))")
        expectEqual(result.stdout.split(separator: "\n").count, 1003)
    }

    @Test("an entry without an archive to list is refused with 65", arguments: ["fifo", "unknown-garbage.zip"])
    func refused(_ kind: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        if kind == "fifo" {
            expectEqual(mkfifo(sandbox.inbox.appendingPathComponent("pipe").path, 0o644), 0)
        } else {
            try sandbox.drop(Data(contentsOf: Samples.fixture(kind)), as: kind)
        }
        try expectEqual(sandbox.runOnce().status, 0)
        let id = try #require(try sandbox.onlyQuarantined()?.id)
        let result = try airlock(["quarantine", "contents", id, "--root", sandbox.root.path])
        expectEqual(result.status, 65, "\(result.stderr)")
        expectEqual(result.stderr.split(separator: "\n").count, 1)
        let missing = try airlock(["quarantine", "contents", "20200101T000000Z-00000000", "--root", sandbox.root.path])
        expectEqual(missing.status, 65)
    }
}

@Suite("Reports of conflicts and collisions name both entries")
struct ConflictReportTests {
    @Test("report.json, the event and quarantine show give other_entry", arguments: [
        ("zip-case-collision.zip", "name-collision", "README.txt", "readme.txt"),
        ("tar-dir-then-file.tar", "path-conflict", "docs", "docs/a.txt"),
        ("tar-file-then-dir.tar", "path-conflict", "docs", "docs/a.txt"),
    ])
    func bothEntries(_ fixture: String, _ reason: String, _ entry: String, _ other: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Data(contentsOf: Samples.fixture(fixture)), as: fixture)
        let run = try sandbox.runOnce()
        expectEqual(run.events.first?.rejected?.otherEntry, other, "\(run.stdout)")
        let quarantined = try #require(try sandbox.onlyQuarantined())
        expectEqual(quarantined.report.reason, reason)
        expectEqual(quarantined.report.entry, entry)
        expectEqual(quarantined.report.otherEntry, other)
        let show = try airlock(["quarantine", "show", quarantined.id, "--root", sandbox.root.path])
        expect(show.stdout.contains(", against \(other)"), "\(show.stdout)")
        try sandbox.expectInvariants()
    }
}
