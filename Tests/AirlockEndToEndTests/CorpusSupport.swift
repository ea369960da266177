import AirlockTestSupport
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
struct PolicyBatch<Case: Sendable>: CustomTestStringConvertible, Sendable {
    let policy: [String: Int]
    let cases: [Case]

    var testDescription: String {
        let keys = policy.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return "\(cases.count) cases under " + (keys.isEmpty ? "the default policy" : keys.joined(separator: ", "))
    }

    /// `cases` in batches that share a policy, in manifest order.
    static func of(_ cases: [Case], policy: (Case) -> [String: Int]) -> [PolicyBatch] {
        var groups: [[String: Int]: [Case]] = [:]
        var order: [[String: Int]] = []
        for item in cases {
            let key = policy(item)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(item)
        }
        return order.map { PolicyBatch(policy: $0, cases: groups[$0]!) }
    }
}

/// One `airlock run --once` over many drops in one sandbox, and what the batch as
/// a whole must show: exit status 0, exactly one event per drop, the outbox
/// exactly the accepted events' outputs, the quarantine exactly the rejected
/// events' ids, and the invariants (sentinels unchanged, nothing outside the
/// root, staging, claims and the inbox empty).
///
/// One run over many drops costs a fraction of a run per drop (each start of
/// `airlock` and of a decoder template loads its libraries again). The drops
/// cannot influence one another: each is decoded by a child of its own, into
/// staging of its own, under the one configuration; the caller makes sure no two
/// land under the same name.
struct DropRun {
    let sandbox: Sandbox
    /// What was dropped, by name.
    let originals: [String: Data]
    /// Each drop's one event; a drop with none or several is an issue already.
    let events: [String: Event]

    /// - Parameter existing: outbox entries made before the run, which it must leave.
    init(_ sandbox: Sandbox, drops: [(name: String, bytes: Data)], existing: [String] = [],
         sourceLocation: SourceLocation = #_sourceLocation) throws {
        self.sandbox = sandbox
        originals = Dictionary(drops.map { ($0.name, $0.bytes) }) { first, _ in first }
        try #require(originals.count == drops.count, "two drops share a name", sourceLocation: sourceLocation)
        for drop in drops { try sandbox.drop(drop.bytes, as: drop.name) }
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "run --once failed: \(result.stderr)", sourceLocation: sourceLocation)
        let all = result.events
        let grouped = Dictionary(grouping: all, by: \.drop)
        var events: [String: Event] = [:]
        for (name, found) in grouped {
            if originals[name] == nil { Issue.record("an event for \(name), which was not dropped", sourceLocation: sourceLocation) }
            if found.count == 1 { events[name] = found[0] }
        }
        for drop in drops where grouped[drop.name]?.count != 1 {
            Issue.record("\(drop.name): \(grouped[drop.name]?.count ?? 0) events instead of one: \(result.stdout)", sourceLocation: sourceLocation)
        }
        self.events = events
        try sandbox.expectInvariants(sourceLocation: sourceLocation)
        let outputs = all.compactMap(\.output).map { String($0.dropFirst("outbox/".count)) }
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), (existing + outputs).sorted(),
                "the outbox holds what was accepted, and only that", sourceLocation: sourceLocation)
        let rejected = all.filter { $0.kind == .rejected }.compactMap(\.id)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).sorted(), rejected.sorted(),
                "the quarantine holds what was rejected, and only that", sourceLocation: sourceLocation)
    }

    /// A rejected drop's quarantine entry: exactly the original bytes and its report.
    func quarantined(_ name: String, _ event: Event, sourceLocation: SourceLocation = #_sourceLocation) throws -> Report? {
        guard event.kind == .rejected, let id = event.id else { return nil }
        let entry = try QuarantinedDrop(sandbox, id: id)
        expectEqual(entry.contents, ["drop", "report.json"], "\(name)", sourceLocation: sourceLocation)
        try expectEqual(Data(contentsOf: entry.drop), originals[name], "\(name): the quarantined bytes are not the original",
                sourceLocation: sourceLocation)
        return entry.report
    }
}

/// Drops every case's archive into one fresh sandbox under their shared policy,
/// runs `airlock run --once` once (`DropRun`, which checks the batch as a whole)
/// and checks each case's manifest verdict: an accepted drop's outbox entry holds
/// exactly the manifest's files and directories, byte for byte; a rejected one
/// leaves the original bytes and a full report in its quarantine entry. Every
/// issue names its case.
/// - Parameter harmlessFiles: every file that lands must have the classes a person
///   would give it: none for text, random bytes and empty files, `archive` for
///   a tar held inside (pigz --zip's one entry).
func expectCorpusVerdicts(_ batch: PolicyBatch<FixtureCase>, harmlessFiles: Bool = false) throws {
    let outputs = batch.cases.filter { $0.verdict == "accepted" }.map { $0.output ?? "" }
    try #require(Set(outputs).count == outputs.count, "two accepted cases land under the same name")
    let sandbox = try Sandbox()
    try sandbox.initialise(policy: batch.policy)
    let run = try DropRun(sandbox, drops: batch.cases.map { (name: $0.file, bytes: try Data(contentsOf: $0.fixture)) })
    for item in batch.cases {
        guard let event = run.events[item.file] else { continue }
        if item.verdict == "accepted" {
            try expectAccepted(item, event, sandbox, harmlessFiles: harmlessFiles)
        } else {
            try expectRejected(item, event, run)
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
    expectEqual(event.output, "outbox/" + output, "\(item.file): \(event)")
    let entry = sandbox.outbox.appendingPathComponent(output)
    let listing = try sandbox.listing(entry)
    let expected = (item.dirs.map { $0 + "/" } + item.files.keys).sorted()
    expectEqual(listing.sorted(), expected, "\(item.file)")
    let hashes = try sha256Hexes(Array(item.files.keys), in: entry)
    expectEqual(hashes, item.files, "\(item.file): file contents differ")
    expectEqual(event.files, Int64(item.files.count), "\(item.file)")
    try expectSafeModes(entry, listing, item.file)
    if harmlessFiles {
        let files = try Manifest.read(in: entry).outboxFiles
        expectEqual(files.count, item.files.count, "\(item.file)")
        for file in files {
            let expected = file.entry.hasSuffix(".tar") ? ["archive"] : []
            expectEqual(file.classes, expected, "\(item.file): \(file.entry) has classes \(file.classes)")
        }
    }
}

/// A rejected case: the manifest's reason, and the original bytes beside a full report in quarantine.
private func expectRejected(_ item: FixtureCase, _ event: Event, _ run: DropRun) throws {
    expectEqual(event.kind, .rejected, "\(item.file): \(event)")
    expectEqual(event.reason, item.reason, "\(item.file): \(event)")
    if let entry = item.entry { expectEqual(event.entry, entry, "\(item.file): \(event)") }
    guard let report = try run.quarantined(item.file, event) else { return }
    expectEqual(report.reason, item.reason, "\(item.file)")
    expectEqual(report.drop, item.file)
    expectEqual(report.size, Int64(run.originals[item.file]?.count ?? -1), "\(item.file)")
    expectEqual(report.sha256?.count, 64, "\(item.file)")
    if let entry = item.entry { expectEqual(report.entry, entry, "\(item.file)") }
    // id, detail, bytes_written, policy, received_at, decided_at and airlock_version: required by Report.
    expectEqual(report.id, event.id, "\(item.file)")
    expect(!report.detail.isEmpty, "\(item.file)")
}

/// One quarantine entry, found by its id: what it holds, its report and the original's path.
struct QuarantinedDrop {
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
        expectEqual(lstat(entry.appendingPathComponent(relative).path, &st), 0)
        let type = st.st_mode & S_IFMT
        if relative.hasSuffix("/") {
            expectEqual(type, S_IFDIR)
            expectEqual(st.st_mode & 0o7777, 0o755, "\(file): \(relative) mode \(String(st.st_mode & 0o7777, radix: 8))")
        } else {
            expectEqual(type, S_IFREG, "\(file): \(relative) is not a regular file")
            expectEqual(st.st_nlink, 1, "\(file): \(relative)")
            expectEqual(st.st_mode & 0o7777, 0o644, "\(file): \(relative) mode \(String(st.st_mode & 0o7777, radix: 8))")
        }
    }
}
