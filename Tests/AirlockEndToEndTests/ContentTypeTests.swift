import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Content: true types with libmagic, content.allow / content.deny, extension_must_match")
struct ContentTypeTests {
    static let kinds = ["text", "png", "pdf", "gzip", "elf", "script", "html", "empty"]
    static let names = ["text": "notes.txt", "png": "pixel.png", "pdf": "paper.pdf", "gzip": "data.gz", "elf": "program",
                        "script": "run.sh", "html": "page.html", "empty": "empty.png"]

    @Test("every file's type is named from its bytes and reaches the accepted journal record", arguments: ["zip", "tar"])
    func detectedTypes(_ format: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", ["detect_types": true])
        var entries: [(name: String, data: Data)] = []
        var expected: [String: String] = [:]
        for kind in ContentTypeTests.kinds {
            let sample = try ContentFiles.sample(kind)
            entries.append(("docs/" + ContentTypeTests.names[kind]!, sample.data))
            expected["docs/" + ContentTypeTests.names[kind]!] = sample.type
        }
        try sandbox.drop(try ContentFiles.archive(format, entries), as: "mixed.\(format)")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.first?.kind, .accepted, "\(result.events)")
        let record = try sandbox.lastJournalRecord(.accepted)
        expectEqual(record?.accepted?.types, expected)
        try sandbox.expectInvariants()
        try expectEqual(sandbox.listing(sandbox.outbox).count, entries.count + 2)
    }

    @Test("content.deny names a type: an executable among documents is disallowed-type, in ZIP and tar", arguments: ["zip", "tar"])
    func denied(_ format: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", ["deny": ["application/x-executable", "application/x-pie-executable", "application/x-sharedlib"]])
        let archive = try ContentFiles.archive(format, [("a.txt", try ContentFiles.sample("text").data),
                                                        ("bin/tool", try ContentFiles.sample("elf").data)])
        // inspect, under the same configuration, reaches the verdict run reaches.
        let copy = sandbox.logs.appendingPathComponent("tools.\(format)")
        try FileManager.default.createDirectory(at: sandbox.logs, withIntermediateDirectories: true)
        try archive.write(to: copy)
        let inspected = try #require(try airlock(["inspect", copy.path, "--root", sandbox.root.path]).events.first)
        expect(inspected.reason == "disallowed-type" && inspected.entry == "bin/tool", "\(inspected)")
        try sandbox.drop(archive, as: "tools.\(format)")
        let report = try sandbox.expectRejected(try sandbox.runOnce(), "disallowed-type", entry: "bin/tool", original: archive)
        let detail = report?.detail ?? ""
        expect(detail.contains("application/x-sharedlib") && detail.contains("content.deny"), "\(detail)")
        expectEqual(report?.types, ["a.txt": "text/plain", "bin/tool": "application/x-sharedlib"])
    }

    @Test("content.allow with image/*: a text file among images is disallowed-type naming the rule", arguments: ["zip", "tar"])
    func allowed(_ format: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", ["allow": ["image/*"]])
        let png = try ContentFiles.sample("png").data
        let good = try ContentFiles.archive(format, [("a.png", png), ("b.png", png)])
        try sandbox.drop(good, as: "good.\(format)")
        let first = try sandbox.runOnce()
        expectEqual(first.events.first?.kind, .accepted, "\(first.events) \(first.stderr)")
        try FileManager.default.removeItem(at: sandbox.outbox.appendingPathComponent("good"))
        let bad = try ContentFiles.archive(format, [("a.png", png), ("z.txt", try ContentFiles.sample("text").data)])
        try sandbox.drop(bad, as: "bad.\(format)")
        let report = try sandbox.expectRejected(try sandbox.runOnce(), "disallowed-type", entry: "z.txt", original: bad)
        expect((report?.detail ?? "").contains("content.allow does not name (image/*)"), "\(String(describing: report))")
    }

    @Test("extension_must_match: HTML named .pdf is type-mismatch; a real PDF, a text .txt and an extensionless ELF pass",
          arguments: ["zip", "tar"])
    func mismatch(_ format: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", ["extension_must_match": true])
        let fine = try ContentFiles.archive(format, [("paper.pdf", try ContentFiles.sample("pdf").data),
                                                     ("notes.txt", try ContentFiles.sample("text").data),
                                                     ("program", try ContentFiles.sample("elf").data)])
        try sandbox.drop(fine, as: "fine.\(format)")
        let first = try sandbox.runOnce()
        expectEqual(first.events.first?.kind, .accepted, "\(first.events) \(first.stderr)")
        try FileManager.default.removeItem(at: sandbox.outbox.appendingPathComponent("fine"))
        let bad = try ContentFiles.archive(format, [("paper.pdf", try ContentFiles.sample("pdf").data),
                                                    ("report.pdf", try ContentFiles.sample("html").data)])
        try sandbox.drop(bad, as: "bad.\(format)")
        let report = try sandbox.expectRejected(try sandbox.runOnce(), "type-mismatch", entry: "report.pdf", original: bad)
        let detail = report?.detail ?? ""
        expect(detail.contains("text/html") && detail.contains(".pdf names application/pdf") && detail.contains("extension_must_match"), "\(detail)")
    }

    /// Entries that break an archive rule and content rules at once, in both orders.
    static let precedenceCases: [(name: String, entries: [String], reason: String, entry: String)] = [
        ("an unsafe path outranks a denied type", ["../outside.txt", "tool"], "unsafe-path", "../outside.txt"),
        ("a denied type outranks a mismatch", ["report.pdf", "tool"], "disallowed-type", "tool"),
        ("two mismatches: the first name in byte order", ["b.pdf", "a.png"], "type-mismatch", "a.png"),
    ]

    @Test("the verdict is the same whatever the entry order, archive rules first, then disallowed-type, then type-mismatch",
          arguments: [0, 1, 2], ["zip", "tar"])
    func precedence(_ index: Int, _ format: String) throws {
        let item = ContentTypeTests.precedenceCases[index]
        let contents: [String: Data] = ["../outside.txt": try ContentFiles.sample("text").data, "tool": try ContentFiles.sample("elf").data,
                                        "report.pdf": try ContentFiles.sample("html").data, "b.pdf": try ContentFiles.sample("text").data,
                                        "a.png": try ContentFiles.sample("html").data]
        for order in [item.entries, item.entries.reversed()] {
            let sandbox = try Sandbox()
            try sandbox.initialise()
            try sandbox.configure("content", ["deny": ["application/x-sharedlib"], "extension_must_match": true])
            let archive = try ContentFiles.archive(format, order.map { ($0, contents[$0]!) })
            try sandbox.drop(archive, as: "mixed.\(format)")
            _ = try sandbox.expectRejected(try sandbox.runOnce(), item.reason, entry: item.entry, original: archive)
        }
    }

    @Test("a magic database that cannot be loaded defers the drop with a clear message; nothing is accepted or lost",
          arguments: ["/nonexistent/magic.mgc", "garbage"])
    func unreadableDatabase(_ database: String) throws {
        let sandbox = try Sandbox()
        let garbage = sandbox.logs.appendingPathComponent("garbage.mgc")
        try FileManager.default.createDirectory(at: sandbox.logs, withIntermediateDirectories: true)
        try Data("this is not a magic database\n".utf8).write(to: garbage)
        let path = database == "garbage" ? garbage.path : database
        try sandbox.initialise()
        try sandbox.configure("content", ["magic_database": path, "detect_types": true])
        let archive = try ContentFiles.archive("zip", [("a.txt", try ContentFiles.sample("text").data)])
        try sandbox.drop(archive, as: "waits.zip")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 75, "deferred drops make --once exit EX_TEMPFAIL: \(result.stderr)")
        let event = try #require(result.events.first)
        expectEqual(event.kind, .deferred, "\(event)")
        expect((event.detail ?? "").contains("cannot load the magic database \(path)"), "\(event)")
        try expectEqual(sandbox.listing(sandbox.outbox), [])
        try expectEqual(sandbox.listing(sandbox.quarantine), [])
        try expectEqual(sandbox.listing(sandbox.staging), [])
        let claims = try sandbox.listing(sandbox.claimed)
        expect(claims.contains { $0.hasSuffix("/drop") }, "the drop stays claimed: \(claims)")
        // With the database back, the same drop is accepted.
        try sandbox.configure("content", ["magic_database": "/usr/lib/file/magic.mgc"])
        let again = try sandbox.runOnce()
        expectEqual(again.events.first?.kind, .accepted, "\(again.events) \(again.stderr)")
        try sandbox.expectInvariants()
    }

    @Test("a keyed render is typed like an extracted file, and content.allow judges it")
    func keyedRender() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", ["detect_types": true])
        let memo = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/keyed/memo-binary.plist"))
        try sandbox.drop(memo, as: "memo.plist")
        let first = try sandbox.runOnce()
        expectEqual(first.events.first?.kind, .accepted, "\(first.events) \(first.stderr)")
        try expectEqual(sandbox.lastJournalRecord(.accepted)?.accepted?.types, ["memo.json": "application/json"])
        try FileManager.default.removeItem(at: sandbox.outbox.appendingPathComponent("memo"))
        try sandbox.configure("content", ["allow": ["image/*"]])
        try sandbox.drop(memo, as: "memo.plist")
        _ = try sandbox.expectRejected(try sandbox.runOnce(), "disallowed-type", entry: "memo.json", original: memo)
    }

    @Test("content settings are strict: a malformed pattern or an unknown content class is a configuration error")
    func strictSettings() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        for (values, message) in [(["allow": ["Image/PNG"]], "content.allow"), (["deny": ["image"]], "content.deny"),
                                  (["deny_classes": ["executables"]], "content.deny_classes: \"executables\" is not a content class"),
                                  (["deny_classes": "script"], "content.deny_classes"),
                                  (["mime_types": "/nonexistent/mime.types", "extension_must_match": true], "content.mime_types")] as [([String: Any], String)] {
            let saved = try Data(contentsOf: sandbox.root.appendingPathComponent("airlock.json"))
            try sandbox.configure("content", values)
            let result = try sandbox.runOnce()
            expectEqual(result.status, 78, "\(values): \(result.stderr)")
            expect(result.stderr.contains(message), "\(result.stderr)")
            try saved.write(to: sandbox.root.appendingPathComponent("airlock.json"))
        }
    }
}
