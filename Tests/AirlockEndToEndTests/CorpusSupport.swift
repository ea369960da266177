import Foundation
import Testing

/// One case of a corpus manifest: fixtures/archives/manifest.json (our own
/// generator) or fixtures/compat/manifest.json (archives the real tools wrote).
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
    /// The directory beneath the repository that holds the archive.
    let directory: String
    /// For the compatibility corpus: which tool wrote the archive, and what bsdtar said of it.
    let tool: String?
    let format: String?
    let bsdtar: String?
    /// Why airlock refuses, on purpose, an archive bsdtar extracts.
    let departure: String?

    var testDescription: String { tool.map { "\(name) (\($0))" } ?? name }

    static let all: [FixtureCase] = load("fixtures/archives")

    /// A case as the manifest spells it.
    private struct Listed: Decodable {
        let name: String
        let file: String
        let verdict: String
        let reason: String?
        let entry: String?
        let output: String?
        let files: [String: String]?
        let dirs: [String]?
        let policy: [String: Int]?
        let tool: String?
        let format: String?
        let bsdtar: String?
        let departsFromBsdtar: String?

        enum CodingKeys: String, CodingKey {
            case name, file, verdict, reason, entry, output, files, dirs, policy, tool, format, bsdtar
            case departsFromBsdtar = "departs_from_bsdtar"
        }
    }

    /// The cases of DIRECTORY/manifest.json; an unreadable manifest yields none, which the suites' coverage tests catch.
    static func load(_ directory: String) -> [FixtureCase] {
        struct Manifest: Decodable { let cases: [Listed] }
        let url = Binary.repository.appendingPathComponent(directory).appendingPathComponent("manifest.json")
        guard let data = try? Data(contentsOf: url), let cases = try? JSONDecoder().decode(Manifest.self, from: data).cases else { return [] }
        let archives = directory == "fixtures/archives" ? directory : directory + "/archives"
        return cases.map { item in
            FixtureCase(
                name: item.name, file: item.file, verdict: item.verdict, reason: item.reason, entry: item.entry, output: item.output,
                files: item.files ?? [:], dirs: item.dirs ?? [], policy: item.policy ?? [:], directory: archives,
                tool: item.tool, format: item.format, bsdtar: item.bsdtar, departure: item.departsFromBsdtar)
        }
    }

    var fixture: URL { Binary.repository.appendingPathComponent(directory).appendingPathComponent(file) }
}

/// Drops the case's archive into a fresh sandbox, runs `airlock run --once` and
/// checks the manifest's verdict with the invariants: an accepted drop's outbox
/// entry holds exactly the manifest's files and directories, byte for byte; a
/// rejected one leaves the original bytes and a full report in quarantine.
/// - Parameter harmlessFiles: every file that lands must have the classes a person
///   would give it: none for text, random bytes and empty files, `archive` for
///   a tar held inside (pigz --zip's one entry).
func expectCorpusVerdict(_ item: FixtureCase, harmlessFiles: Bool = false) throws {
    let sandbox = try Sandbox()
    try sandbox.initialise(policy: item.policy)
    let original = try Data(contentsOf: item.fixture)
    try sandbox.drop(original, as: item.file)

    let result = try sandbox.runOnce()
    #expect(result.status == 0, "run --once failed: \(result.stderr)")
    let events = result.events
    #expect(events.count == 1, "one event per drop: \(result.stdout)")
    let event = try #require(events.first)
    #expect(event.drop == item.file)
    try sandbox.expectInvariants()

    if item.verdict == "accepted" {
        guard event.kind == .accepted else {
            // One issue that says why, from the quarantine report, rather than one per missing output.
            let report = try sandbox.onlyQuarantined()?.report
            let reason = event.reason ?? "no reason", entry = event.entry ?? "-"
            let detail = report?.detail ?? "no report"
            Issue.record("\(item.file) was not accepted: \(reason) at \(entry): \(detail)")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path) == [])
        try #require(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [item.output!])
        #expect(event.output == "outbox/" + item.output!)
        let entry = sandbox.outbox.appendingPathComponent(item.output!)
        let listing = try sandbox.listing(entry)
        let expected = (item.dirs.map { $0 + "/" } + item.files.keys).sorted()
        #expect(listing.sorted() == expected)
        let hashes = try sha256Hexes(Array(item.files.keys), in: entry)
        #expect(hashes == item.files, "file contents differ")
        #expect(event.files == Int64(item.files.count))
        try expectSafeModes(entry, listing)
        if harmlessFiles {
            let files = try Manifest.read(in: entry).outboxFiles
            #expect(files.count == item.files.count)
            for file in files {
                let expected = file.entry.hasSuffix(".tar") ? ["archive"] : []
                #expect(file.classes == expected, "\(item.file): \(file.entry) has classes \(file.classes)")
            }
        }
    } else {
        #expect(event.kind == .rejected, "\(event)")
        #expect(event.reason == item.reason, "\(event)")
        if let entry = item.entry { #expect(event.entry == entry) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [])
        let quarantined = try #require(try sandbox.onlyQuarantined())
        #expect(quarantined.id == event.id)
        #expect(try Data(contentsOf: quarantined.drop) == original, "the quarantined bytes are not the original")
        let report = quarantined.report
        #expect(report.reason == item.reason)
        #expect(report.drop == item.file)
        #expect(report.size == Int64(original.count))
        #expect(report.sha256?.count == 64)
        if let entry = item.entry { #expect(report.entry == entry) }
        // id, detail, bytes_written, policy, received_at, decided_at and airlock_version: required by Report.
        #expect(report.id == quarantined.id)
        #expect(!report.detail.isEmpty)
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
