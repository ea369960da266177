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

/// The cases of a corpus that share a policy, checked together on one root.
struct FixtureBatch: CustomTestStringConvertible, Sendable {
    let cases: [FixtureCase]

    var testDescription: String {
        let policy = cases.first?.policy.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } ?? []
        return "\(cases.count) cases under " + (policy.isEmpty ? "the default policy" : policy.joined(separator: ", "))
    }

    /// `cases` in batches that share a policy, in manifest order.
    static func byPolicy(_ cases: [FixtureCase]) -> [FixtureBatch] {
        var groups: [[String: Int]: [FixtureCase]] = [:]
        var order: [[String: Int]] = []
        for item in cases {
            if groups[item.policy] == nil { order.append(item.policy) }
            groups[item.policy, default: []].append(item)
        }
        return order.map { FixtureBatch(cases: groups[$0]!) }
    }
}

/// Drops every case's archive into one fresh sandbox under their shared policy,
/// runs `airlock run --once` once and checks each case's manifest verdict: an
/// accepted drop's outbox entry holds exactly the manifest's files and
/// directories, byte for byte; a rejected one leaves the original bytes and a
/// full report in its quarantine entry. Then the invariants, for the whole batch:
/// one event per drop, the outbox exactly the accepted outputs, the quarantine
/// exactly the rejected drops, and sentinels, staging, claims and the outside
/// of the root as `expectInvariants` checks them.
///
/// One run over many drops costs a fraction of a run per drop (each start of
/// `airlock` and of a decoder template loads its libraries again); the drops
/// cannot influence one another, as each is decoded by a child of its own under
/// the same policy, into staging of its own, and no two cases share a file or
/// an output name. Every issue names its case.
/// - Parameter harmlessFiles: every file that lands must have the classes a person
///   would give it: none for text, random bytes and empty files, `archive` for
///   a tar held inside (pigz --zip's one entry).
func expectCorpusVerdicts(_ batch: FixtureBatch, harmlessFiles: Bool = false) throws {
    let items = batch.cases
    let policy = try #require(items.first?.policy)
    try #require(items.allSatisfy { $0.policy == policy }, "one batch, one policy")
    try #require(Set(items.map(\.file)).count == items.count, "two cases drop the same name")
    let outputs = items.filter { $0.verdict == "accepted" }.map { $0.output ?? "" }
    try #require(Set(outputs).count == outputs.count, "two accepted cases land under the same name")
    let sandbox = try Sandbox()
    try sandbox.initialise(policy: policy)
    var originals: [String: Data] = [:]
    for item in items {
        originals[item.file] = try Data(contentsOf: item.fixture)
        try sandbox.drop(originals[item.file]!, as: item.file)
    }

    let result = try sandbox.runOnce()
    #expect(result.status == 0, "run --once failed: \(result.stderr)")
    let events = Dictionary(grouping: result.events, by: \.drop)
    #expect(events.keys.sorted() == items.map(\.file).sorted(), "one event per drop: \(result.stdout)")
    try sandbox.expectInvariants()
    let accepted = items.filter { events[$0.file]?.first?.kind == .accepted }
    #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted()
            == accepted.compactMap(\.output).sorted(), "the outbox holds what was accepted, and only that")
    let rejected = items.compactMap { events[$0.file]?.first }.filter { $0.kind == .rejected }
    #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).sorted()
            == rejected.compactMap(\.id).sorted(), "the quarantine holds what was rejected, and only that")

    for item in items {
        let caseEvents = events[item.file] ?? []
        guard caseEvents.count == 1, let event = caseEvents.first else {
            Issue.record("\(item.file): \(caseEvents.count) events instead of one")
            continue
        }
        if item.verdict == "accepted" {
            try expectAccepted(item, event, sandbox, harmlessFiles: harmlessFiles)
        } else {
            try expectRejected(item, event, sandbox, original: originals[item.file]!)
        }
    }
}

/// An accepted case: its outbox entry holds exactly the manifest's files and directories.
private func expectAccepted(_ item: FixtureCase, _ event: Event, _ sandbox: Sandbox, harmlessFiles: Bool) throws {
    guard event.kind == .accepted, let output = item.output else {
        // One issue that says why, from the quarantine report, rather than one per missing output.
        let reason = event.reason ?? "no reason", entry = event.entry ?? "-"
        let detail = (try? QuarantinedDrop(sandbox, id: event.id ?? ""))?.report.detail ?? "no report"
        Issue.record("\(item.file) was not accepted: \(reason) at \(entry): \(detail)")
        return
    }
    #expect(event.output == "outbox/" + output, "\(item.file): \(event)")
    let entry = sandbox.outbox.appendingPathComponent(output)
    let listing = try sandbox.listing(entry)
    let expected = (item.dirs.map { $0 + "/" } + item.files.keys).sorted()
    #expect(listing.sorted() == expected, "\(item.file)")
    let hashes = try sha256Hexes(Array(item.files.keys), in: entry)
    #expect(hashes == item.files, "\(item.file): file contents differ")
    #expect(event.files == Int64(item.files.count), "\(item.file)")
    try expectSafeModes(entry, listing, item.file)
    if harmlessFiles {
        let files = try Manifest.read(in: entry).outboxFiles
        #expect(files.count == item.files.count, "\(item.file)")
        for file in files {
            let expected = file.entry.hasSuffix(".tar") ? ["archive"] : []
            #expect(file.classes == expected, "\(item.file): \(file.entry) has classes \(file.classes)")
        }
    }
}

/// A rejected case: the manifest's reason, and the original bytes beside a full report in quarantine.
private func expectRejected(_ item: FixtureCase, _ event: Event, _ sandbox: Sandbox, original: Data) throws {
    #expect(event.kind == .rejected, "\(item.file): \(event)")
    #expect(event.reason == item.reason, "\(item.file): \(event)")
    if let entry = item.entry { #expect(event.entry == entry, "\(item.file): \(event)") }
    guard event.kind == .rejected, let id = event.id else { return }
    let quarantined = try QuarantinedDrop(sandbox, id: id)
    #expect(quarantined.contents == ["drop", "report.json"], "\(item.file)")
    #expect(try Data(contentsOf: quarantined.drop) == original, "\(item.file): the quarantined bytes are not the original")
    let report = quarantined.report
    #expect(report.reason == item.reason, "\(item.file)")
    #expect(report.drop == item.file)
    #expect(report.size == Int64(original.count), "\(item.file)")
    #expect(report.sha256?.count == 64, "\(item.file)")
    if let entry = item.entry { #expect(report.entry == entry, "\(item.file)") }
    // id, detail, bytes_written, policy, received_at, decided_at and airlock_version: required by Report.
    #expect(report.id == id, "\(item.file)")
    #expect(!report.detail.isEmpty, "\(item.file)")
}

/// One quarantine entry, found by its id: what it holds, its report and the original's path.
private struct QuarantinedDrop {
    let contents: [String]
    let report: Report
    let drop: URL

    init(_ sandbox: Sandbox, id: String) throws {
        let directory = sandbox.quarantine.appendingPathComponent(id)
        contents = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        report = try Report.read(directory.appendingPathComponent("report.json"))
        drop = directory.appendingPathComponent("drop")
    }
}

/// No links, no setuid, setgid or sticky bits; the policy's modes.
private func expectSafeModes(_ entry: URL, _ listing: [String], _ file: String) throws {
    for relative in listing {
        var st = stat()
        #expect(lstat(entry.appendingPathComponent(relative).path, &st) == 0)
        let type = st.st_mode & S_IFMT
        if relative.hasSuffix("/") {
            #expect(type == S_IFDIR)
            #expect(st.st_mode & 0o7777 == 0o755, "\(file): \(relative) mode \(String(st.st_mode & 0o7777, radix: 8))")
        } else {
            #expect(type == S_IFREG, "\(file): \(relative) is not a regular file")
            #expect(st.st_nlink == 1, "\(file): \(relative)")
            #expect(st.st_mode & 0o7777 == 0o644, "\(file): \(relative) mode \(String(st.st_mode & 0o7777, radix: 8))")
        }
    }
}
