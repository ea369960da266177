import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The whole records of the root's journal (current and rotated), torn lines skipped.
func journalRecords(_ sandbox: Sandbox) throws -> [Event] {
    let state = sandbox.root.appendingPathComponent("state")
    let names = try FileManager.default.contentsOfDirectory(atPath: state.path)
        .filter { $0.hasPrefix("journal.") && $0.hasSuffix(".jsonl") }
        .sorted { ($0 == "journal.jsonl" ? 0 : Int($0.split(separator: ".")[1]) ?? 0) > ($1 == "journal.jsonl" ? 0 : Int($1.split(separator: ".")[1]) ?? 0) }
    return try Event.journal(names.map { state.appendingPathComponent($0) })
}

/// How many records of `events` the journal holds for `id` (any id when nil).
func recordCount(_ sandbox: Sandbox, _ events: Set<String>, id: String? = nil) throws -> Int {
    try journalRecords(sandbox).filter {
        events.contains($0.kind.rawValue ?? "") && (id == nil || $0.id == id)
    }.count
}

private let terminal: Set<String> = ["accepted", "rejected"]
private let crashed = Int32(SIGKILL)

/// Each named step of the intake's outcome protocol: a `run --once` killed there,
/// then runs that recover, leave exactly one terminal record and the drop in its one place.
@Suite("Crash points: a stop between any two steps of an outcome leaves exactly one record", .serialized)
struct IntakeCrashPointTests {
    struct Case: CustomStringConvertible, Sendable {
        let hostile: Bool
        /// The steps the successive runs are killed at, before a clean run.
        let stops: [String]
        var description: String { (hostile ? "rejected: " : "accepted: ") + stops.joined(separator: ", then ") }
    }

    static let cases: [Case] = [
        Case(hostile: false, stops: ["accepted-renamed"]),
        Case(hostile: false, stops: ["accepted-journalled"]),
        Case(hostile: false, stops: ["claim-half-removed"]),
        Case(hostile: false, stops: ["accepted-renamed", "settled-journalled"]),
        Case(hostile: false, stops: ["accepted-journalled", "claim-half-removed"]),
        Case(hostile: true, stops: ["rejected-reported"]),
        Case(hostile: true, stops: ["rejected-journalled"]),
        Case(hostile: true, stops: ["rejected-reported", "settled-journalled"]),
    ]

    @Test("killed at a step, then recovered", arguments: cases)
    func killedThenRecovered(_ crash: Case) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let bytes = crash.hostile ? Samples.traversalZip : Samples.validZip
        try sandbox.drop(bytes, as: "photos.zip")
        for stop in crash.stops {
            let run = try sandbox.runOnce(environment: ["AIRLOCK_TEST_CRASH_AT": stop])
            expectEqual(run.status, crashed, "the run was to be killed at \(stop): \(run.status) \(run.stderr)")
            try expect(recordCount(sandbox, terminal) <= 1, "two terminal records after a stop at \(stop)")
        }
        let clean = try sandbox.runOnce()
        expectEqual(clean.status, 0, "\(clean.stderr)")
        try expectOneOutcome(sandbox, hostile: crash.hostile, bytes: bytes)
        // Once more: nothing left to do, nothing written.
        let again = try sandbox.runOnce()
        expect(again.status == 0 && again.events.isEmpty)
        try expectOneOutcome(sandbox, hostile: crash.hostile, bytes: bytes)
    }

    @Test("a stop before the drop is decided leaves no terminal record; the next run decides it once", .needsLeases)
    func undecidedStop() throws {
        // The decoder hangs, so the supervisor is surely killed while it waits.
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.traversalZip, as: "photos.zip")
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_DECODER_FAULT": "hang"])
        expect(waitFor(seconds: 20) { ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.staging.path))?.count ?? 0) == 1 })
        daemon.signal(SIGKILL)
        expect(daemon.waitForExit(seconds: 10) != nil)
        try expectEqual(recordCount(sandbox, terminal), 0, "a record for a drop that was never decided")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path).count, 1)
        try expectEqual(sandbox.runOnce().status, 0)
        try expectOneOutcome(sandbox, hostile: true, bytes: Samples.traversalZip)
    }

    private func expectOneOutcome(_ sandbox: Sandbox, hostile: Bool, bytes: Data,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        try sandbox.expectInvariants(sourceLocation: sourceLocation)
        let records = try journalRecords(sandbox).filter { terminal.contains($0.kind.rawValue) }
        expectEqual(records.count, 1, "terminal records: \(records)", sourceLocation: sourceLocation)
        expectEqual(records.first?.kind.rawValue, (hostile ? "rejected" : "accepted"), sourceLocation: sourceLocation)
        if hostile {
            let quarantined = try #require(try sandbox.onlyQuarantined(sourceLocation: sourceLocation))
            try expectEqual(Data(contentsOf: quarantined.drop), bytes, sourceLocation: sourceLocation)
            expectEqual(records.first?.id, quarantined.id, sourceLocation: sourceLocation)
            expectEqual(records.first?.reason, "unsafe-path", sourceLocation: sourceLocation)
            try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [], sourceLocation: sourceLocation)
        } else {
            try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"], sourceLocation: sourceLocation)
            expectEqual(records.first?.output, "outbox/photos", sourceLocation: sourceLocation)
            expect(records.first?.files != nil, "the record carries the totals", sourceLocation: sourceLocation)
            try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [], sourceLocation: sourceLocation)
        }
    }
}

/// `quarantine release` and `purge` killed at each step: whoever runs next (a
/// start of the intake, another release or purge) finishes the step once.
@Suite("Crash points of release and purge: exactly one released or purged record", .serialized)
struct DeskCrashPointTests {
    /// A root with one quarantined drop; its id.
    private func quarantined(_ sandbox: Sandbox) throws -> String {
        try sandbox.initialise()
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        return try #require(try sandbox.onlyQuarantined()).id
    }

    private func root(_ sandbox: Sandbox) -> [String] { ["--root", sandbox.root.path] }

    @Test("release killed at a step, then the intake starts", arguments: ["release-marked", "release-moved", "release-noted", "release-journalled"])
    func release(_ stop: String) throws {
        let sandbox = try Sandbox()
        let id = try quarantined(sandbox)
        let killed = try airlock(["quarantine", "release", id] + root(sandbox), environment: ["AIRLOCK_TEST_CRASH_AT": stop])
        expectEqual(killed.status, crashed, "\(killed.status) \(killed.stderr)")
        try expect(recordCount(sandbox, ["released"], id: id) <= 1)
        // The start of an intake recovers; a release that never moved the drop is undone and can be asked again.
        try expectEqual(sandbox.runOnce().status, 0)
        let entry = sandbox.quarantine.appendingPathComponent(id)
        if FileManager.default.fileExists(atPath: entry.appendingPathComponent("drop").path) {
            expectEqual(stop, "release-marked", "the drop was moved before \(stop)")
            try expectEqual(recordCount(sandbox, ["released"], id: id), 0, "a record for a release that did not happen")
            try expectEqual(airlock(["quarantine", "release", id] + root(sandbox)).status, 0)
            try expectEqual(sandbox.runOnce().status, 0)
        }
        try expectEqual(recordCount(sandbox, ["released"], id: id), 1)
        let history = try Report.read(entry.appendingPathComponent("report.json")).history ?? []
        expectEqual(history.filter { $0.action == "released" }.count, 1)
        expect(!FileManager.default.fileExists(atPath: entry.appendingPathComponent("drop").path))
        // The released drop went through intake again: one new entry with the original bytes.
        let entries = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).filter { $0 != id }
        expectEqual(entries.count, 1)
        if let again = entries.first {
            try expectEqual(Data(contentsOf: sandbox.quarantine.appendingPathComponent(again).appendingPathComponent("drop")), Samples.traversalZip)
            try expectEqual(recordCount(sandbox, terminal, id: again), 1)
        }
        try expectEqual(listing(sandbox, "state/releasing"), [])
        try expectEqual(airlock(["quarantine", "release", id] + root(sandbox)).status, 65, "a second release is refused")
        try sandbox.expectInvariants()
    }

    @Test("purge killed at a step, then another purge or the intake finishes it", arguments: ["purge-hidden", "purge-journalled"])
    func purge(_ stop: String) throws {
        let sandbox = try Sandbox()
        let id = try quarantined(sandbox)
        let killed = try airlock(["quarantine", "purge", id] + root(sandbox), environment: ["AIRLOCK_TEST_CRASH_AT": stop])
        expectEqual(killed.status, crashed, "\(killed.status) \(killed.stderr)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [], "the entry is out of view")
        // Another purge (here of nothing older than a week) recovers first.
        try expectEqual(airlock(["quarantine", "purge", "--older-than", "7d"] + root(sandbox)).status, 0)
        try expectEqual(recordCount(sandbox, ["purged"], id: id), 1)
        try expectEqual(listing(sandbox, "state/purging"), [])
        try expectEqual(sandbox.runOnce().status, 0)
        try expectEqual(recordCount(sandbox, ["purged"], id: id), 1)
        try sandbox.expectInvariants()
    }

    private func listing(_ sandbox: Sandbox, _ path: String) throws -> [String] {
        let url = sandbox.root.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try sandbox.listing(url)
    }
}
