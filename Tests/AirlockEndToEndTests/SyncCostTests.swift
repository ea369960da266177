import AirlockTestSupport
import Foundation
import Testing

/// What durability costs an accepted drop, counted with strace: the syncs the
/// commit protocol needs and none that a later sync already covers.
@Suite("Sync cost: an accepted drop costs two syncfs and one fsync at most, none covered by a syncfs")
struct SyncCostTests {
    static let strace = "/usr/bin/strace"

    /// Each line: `PID fsync(FD</path>) = 0`; resumed and signal lines carry no call.
    private func calls(in trace: URL) throws -> [(call: String, path: String)] {
        try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").compactMap { line -> (call: String, path: String)? in
            guard let open = line.firstIndex(of: "("), let start = line.firstIndex(of: "<"), let end = line.firstIndex(of: ">") else { return nil }
            let call = line[line.startIndex..<open].split(separator: " ").last.map(String.init) ?? ""
            return (call, String(line[line.index(after: start)..<end]))
        }
    }

    @Test("ten accepted drops: a syncfs before each rename and one after it; no fsync of a claim, its commit note, its removal, the manifest or the outbox; one journal fsync each",
          .enabled(if: FileManager.default.isExecutableFile(atPath: strace), "needs strace (package strace)"))
    func acceptedDropSyncs() throws {
        let drops = 10
        let (sandbox, trace) = try tracedRun(drops: drops, calls: "fsync,fdatasync,syncfs")
        let calls = try calls(in: trace)
        // strace names descriptors by their resolved paths.
        let root = sandbox.root.resolvingSymlinksInPath()
        let state = root.appendingPathComponent("state").path
        func count(_ call: String, _ matches: (String) -> Bool) -> Int { calls.filter { $0.call == call && matches($0.path) }.count }
        let outbox = root.appendingPathComponent("outbox").path
        expectEqual(count("syncfs") { $0.hasPrefix(state + "/staging/") }, drops, "one syncfs per drop before its rename, on staging")
        expectEqual(count("syncfs") { $0 == outbox }, drops, "one syncfs per drop after its rename, shared with other drops' when they wait at once")
        expectEqual(count("syncfs") { _ in true }, 2 * drops)
        expectEqual(count("fdatasync") { _ in true }, 0)
        expectEqual(count("fsync") { $0.hasPrefix(state + "/claimed/") }, 0, "the claim and its commit note are covered by the syncfs")
        expectEqual(count("fsync") { $0.hasPrefix(state + "/staging/") }, 0, "staging and its manifest are covered by the syncfs")
        expectEqual(count("fsync") { $0 == state + "/journal.jsonl" }, drops, "the accepted record only; claimed is not fsynced")
        expectEqual(count("fsync") { $0 == outbox }, 0, "the rename is covered by the syncfs after it")
        expectEqual(count("fsync") { $0 == state + "/claimed" }, 0, "a lost removal is redone by recovery, from the accepted record")
        // Nothing besides: init made the journal (its generation table, state/ twice),
        // and the decoders' confinement state is written without a sync.
        expectEqual(count("fsync") { _ in true }, drops, "\(calls.map(\.path))")
    }

    @Test("with commit.sync \"fsync\": no syncfs; every staged file and directory fsynced, then the outbox after each rename",
          .enabled(if: FileManager.default.isExecutableFile(atPath: strace), "needs strace (package strace)"))
    func fsyncModeSyncsTheOutbox() throws {
        let drops = 3
        let (sandbox, trace) = try tracedRun(drops: drops, calls: "fsync,syncfs") { sandbox in
            try sandbox.configure("commit", ["sync": "fsync"])
        }
        let calls = try calls(in: trace)
        let root = sandbox.root.resolvingSymlinksInPath()
        expectEqual(calls.filter { $0.call == "syncfs" }.count, 0)
        expectEqual(calls.filter { $0.call == "fsync" && $0.path == root.appendingPathComponent("outbox").path }.count, drops)
        expect(calls.filter { $0.call == "fsync" && $0.path.hasPrefix(root.appendingPathComponent("state/staging").path + "/") }.count >= drops,
               "\(calls.map(\.path))")
    }

    /// A root laid out by an earlier init, which made no journal: the first
    /// append creates it, with its generation, as it always did.
    @Test("a root whose init made no journal gets one from its first drop, with its generation",
          .enabled(if: FileManager.default.isExecutableFile(atPath: strace), "needs strace (package strace)"))
    func rootWithoutJournalStillJournals() throws {
        let drops = 3
        let (sandbox, trace) = try tracedRun(drops: drops, calls: "fsync") { sandbox in
            let state = sandbox.root.appendingPathComponent("state")
            for name in try FileManager.default.contentsOfDirectory(atPath: state.path) where name.hasPrefix("journal.") {
                try FileManager.default.removeItem(at: state.appendingPathComponent(name))
            }
        }
        let state = sandbox.root.appendingPathComponent("state")
        let generations = try String(contentsOf: state.appendingPathComponent("journal.generations"), encoding: .utf8)
        expect(!generations.isEmpty)
        let records = try String(contentsOf: state.appendingPathComponent("journal.jsonl"), encoding: .utf8).split(separator: "\n")
        expectEqual(records.filter { $0.contains(#""event":"accepted""#) }.count, drops)
        expectEqual(records.filter { $0.contains(#""event":"claimed""#) }.count, drops)
        let fsyncs = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("fsync(") }
        expectEqual(fsyncs.filter { $0.contains("journal.generations") }.count, 1, "the creation's: \(fsyncs)")
    }

    @Test("init makes the journal: its current file and its generation")
    func initMakesTheJournal() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let state = sandbox.root.appendingPathComponent("state")
        expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("journal.jsonl").path))
        try expectEqual(String(contentsOf: state.appendingPathComponent("journal.generations"), encoding: .utf8).isEmpty, false)
        // A second init leaves the journal it finds as it is.
        try Data("{\"time\":\"x\"}\n".utf8).write(to: state.appendingPathComponent("journal.jsonl"))
        try sandbox.initialise()
        try expectEqual(String(contentsOf: state.appendingPathComponent("journal.jsonl"), encoding: .utf8), "{\"time\":\"x\"}\n")
    }

    /// A claim's removal is not fsynced; recovery redoes a lost one from the drop's
    /// `accepted` record, so that record may not leave the kept journal files before
    /// the removal is durable: each rotation fsyncs `claimed/` first.
    @Test("with a journal that rotates at every record, claimed/ is fsynced before each rotation",
          .enabled(if: FileManager.default.isExecutableFile(atPath: strace), "needs strace (package strace)"))
    func rotationSyncsClaims() throws {
        let drops = 4
        let (sandbox, trace) = try tracedRun(drops: drops, calls: "fsync,renameat,renameat2") { sandbox in
            try sandbox.configure("journal", ["max_bytes": 1, "keep": 1])
        }

        let claimed = sandbox.root.resolvingSymlinksInPath().appendingPathComponent("state/claimed").path
        var synced = false, rotations = 0
        for line in try String(contentsOf: trace, encoding: .utf8).split(separator: "\n") {
            if line.contains("fsync(") && line.contains("<\(claimed)>") { synced = true }
            guard line.contains("renameat(") && line.contains("\"journal.jsonl\"") && line.contains("\"journal.1.jsonl\"") else { continue }
            expect(synced, "a rotation without an fsync of claimed/ before it: \(line)")
            synced = false
            rotations += 1
        }
        // Two records (claimed, accepted) per drop, each past the limit.
        expect(rotations >= drops)
    }

    /// `run --once` over `drops` copies of a valid ZIP with one worker (so no sync
    /// is shared and the counts are per drop), under strace tracing `calls`; every
    /// drop accepted and the invariants held. Returns the sandbox and the trace.
    private func tracedRun(drops: Int, calls: String,
                           configure: (Sandbox) throws -> Void = { _ in }) throws -> (Sandbox, URL) {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["workers": 1])
        try configure(sandbox)
        let zip = try Data(contentsOf: Samples.fixture("zip-deflate-valid.zip"))
        for index in 0..<drops { try sandbox.drop(zip, as: "d\(index).zip") }
        let trace = sandbox.logs.appendingPathComponent("syscalls.trace")
        let result = try airlock(["run", "--once", "--root", sandbox.root.path],
                                 under: [SyncCostTests.strace, "-f", "-qq", "-y", "-e", "trace=" + calls, "-o", trace.path])
        expectEqual(result.status, 0, "\(result.stderr)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, drops)
        try sandbox.expectInvariants()
        return (sandbox, trace)
    }
}
