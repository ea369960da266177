import Foundation
import Testing

/// One case of fixtures/archives/manifest.json.
struct FixtureCase: CustomTestStringConvertible, Sendable {
    let name: String
    let file: String
    let verdict: String
    let reason: String?
    let entry: String?
    let output: String?
    let files: [String: String]
    let dirs: [String]
    let policy: [String: Int]

    var testDescription: String { name }

    static let all: [FixtureCase] = {
        let url = Binary.repository.appendingPathComponent("fixtures/archives/manifest.json")
        guard let data = try? Data(contentsOf: url),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let cases = object["cases"] as? [[String: Any]] else { return [] }
        return cases.map { item in
            FixtureCase(
                name: item["name"] as! String, file: item["file"] as! String, verdict: item["verdict"] as! String,
                reason: item["reason"] as? String, entry: item["entry"] as? String, output: item["output"] as? String,
                files: item["files"] as? [String: String] ?? [:], dirs: item["dirs"] as? [String] ?? [],
                policy: item["policy"] as? [String: Int] ?? [:])
        }
    }()

    var fixture: URL { Binary.repository.appendingPathComponent("fixtures/archives").appendingPathComponent(file) }
}

@Suite("Fixture corpus: every committed archive reaches its manifest verdict with the invariants intact")
struct FixtureCorpusTests {
    @Test("the manifest is not empty and covers every archive reason code")
    func manifestCoversReasons() {
        let reasons = Set(FixtureCase.all.compactMap(\.reason))
        for reason in ["unsafe-path", "unsupported-entry-type", "duplicate-path", "path-conflict", "name-collision",
                       "name-too-long", "too-deep", "too-many-entries", "file-too-large", "total-too-large",
                       "ratio-too-high", "corrupt-archive", "encrypted-entry", "unsupported-format"] {
            #expect(reasons.contains(reason), "no fixture for \(reason)")
        }
        #expect(FixtureCase.all.filter { $0.verdict == "accepted" }.count >= 10)
    }

    @Test("run --once ends the drop where the manifest says", arguments: FixtureCase.all)
    func corpusCase(_ item: FixtureCase) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: item.policy)
        let original = try Data(contentsOf: item.fixture)
        try sandbox.drop(original, as: item.file)

        let result = try sandbox.runOnce()
        #expect(result.status == 0, "run --once failed: \(result.stderr)")
        let events = result.events
        #expect(events.count == 1, "one event per drop: \(result.stdout)")
        let event = events.first ?? [:]
        #expect(event["drop"] as? String == item.file)
        try sandbox.expectInvariants()

        if item.verdict == "accepted" {
            #expect(event["event"] as? String == "accepted", "\(event)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path) == [])
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [item.output!])
            #expect(event["output"] as? String == "outbox/" + item.output!)
            let entry = sandbox.outbox.appendingPathComponent(item.output!)
            let listing = try sandbox.listing(entry)
            let expected = (item.dirs.map { $0 + "/" } + item.files.keys).sorted()
            #expect(listing.sorted() == expected)
            let hashes = try sha256Hexes(Array(item.files.keys), in: entry)
            #expect(hashes == item.files, "file contents differ")
            #expect(event["files"] as? Int == item.files.count)
            try expectSafeModes(entry, listing)
        } else {
            #expect(event["event"] as? String == "rejected", "\(event)")
            #expect(event["reason"] as? String == item.reason, "\(event)")
            if let entry = item.entry { #expect(event["entry"] as? String == entry) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [])
            guard let quarantined = try sandbox.onlyQuarantined() else { return }
            #expect(quarantined.id == event["id"] as? String)
            #expect(try Data(contentsOf: quarantined.drop) == original, "the quarantined bytes are not the original")
            let report = quarantined.report
            #expect(report["reason"] as? String == item.reason)
            #expect(report["drop"] as? String == item.file)
            #expect(report["size"] as? Int == original.count)
            #expect((report["sha256"] as? String)?.count == 64)
            if let entry = item.entry { #expect(report["entry"] as? String == entry) }
            for key in ["id", "detail", "bytes_written", "policy", "received_at", "decided_at", "airlock_version"] {
                #expect(report[key] != nil, "report lacks \(key)")
            }
        }
    }

    /// No links, no setuid, setgid or sticky bits; the policy's modes.
    private func expectSafeModes(_ entry: URL, _ listing: [String]) throws {
        for relative in listing {
            var st = stat()
            #expect(lstat(entry.appendingPathComponent(relative).path, &st) == 0)
            let type = st.st_mode & S_IFMT
            if relative.hasSuffix("/") {
                #expect(type == S_IFDIR)
                #expect(st.st_mode & 0o7777 == 0o755, "\(relative) mode \(String(st.st_mode & 0o7777, radix: 8))")
            } else {
                #expect(type == S_IFREG, "\(relative) is not a regular file")
                #expect(st.st_nlink == 1)
                #expect(st.st_mode & 0o7777 == 0o644, "\(relative) mode \(String(st.st_mode & 0o7777, radix: 8))")
            }
        }
    }
}
