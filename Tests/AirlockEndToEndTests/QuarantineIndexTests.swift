import AirlockTestSupport
import Foundation
import Testing

@Suite("quarantine list pages and filters from state/quarantine.index, which is checked against the quarantine on every read")
struct QuarantineIndexTests {
    /// Three unsafe-path entries and one unsupported-format entry.
    func fourEntries() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        for name in ["alpha.zip", "beta.zip", "Gamma.zip"] { try sandbox.drop(Samples.traversalZip, as: name) }
        try sandbox.drop(Data("not an archive".utf8), as: "notes.txt")
        try expectEqual(sandbox.runOnce().status, 0)
        return sandbox
    }

    func list(_ sandbox: Sandbox, _ extra: [String] = []) throws -> [QuarantineListing] {
        let outcome = try airlock(["quarantine", "list", "--json", "--root", sandbox.root.path] + extra)
        expectEqual(outcome.status, 0, "\(outcome.stderr)")
        return outcome.documents(QuarantineListing.self)
    }

    var index: String { "state/quarantine.index" }

    @Test("--reason, --uploader, --text (any case), --offset and --limit select and page, newest first")
    func filtersAndPaging() throws {
        let sandbox = try fourEntries()
        let all = try list(sandbox)
        expectEqual(all.count, 4)
        let times = all.map(\.decidedAt)
        expectEqual(times, times.sorted(by: >))
        try expectEqual(list(sandbox, ["--reason", "unsafe-path"]).count, 3)
        try expectEqual(list(sandbox, ["--text", "GAMMA"]).map(\.drop), ["Gamma.zip"])
        let me = try #require(all.first?.uploader)
        try expectEqual(list(sandbox, ["--uploader", me]).count, 4)
        try expect(list(sandbox, ["--uploader", "nobody-at-all"]).isEmpty)
        let page = try list(sandbox, ["--offset", "1", "--limit", "2"]).map(\.id)
        expectEqual(page, all[1...2].map(\.id))
        expect(FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent(index).path))
    }

    @Test("a foreign, torn or stale index is not trusted: entries it lacks are read, ones gone are dropped, and it is rewritten")
    func staleIndex() throws {
        let sandbox = try fourEntries()
        let all = try list(sandbox)
        let file = sandbox.root.appendingPathComponent(index)
        var text = try String(contentsOf: file, encoding: .utf8)
        // Torn: the last line cut short; an entry the index never heard of; a line for an entry that is gone.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let ghost = "20200101T000000Z-00000000\t2020-01-01T00:00:00.000Z\tunsafe-path\t0\t1\troot\tghost.zip\t"
        text = lines.dropLast(2).joined(separator: "\n") + "\n" + ghost + "\n" + String(lines[lines.count - 2].prefix(20))
        try text.write(to: file, atomically: true, encoding: .utf8)
        try expectEqual(list(sandbox).compactMap { $0.id }, all.compactMap { $0.id })
        let rewritten = try String(contentsOf: file, encoding: .utf8)
        expect(!rewritten.contains("ghost.zip"))
        expectEqual(rewritten.split(separator: "\n").count, 5, "\(rewritten)")
        try "something else entirely\n".write(to: file, atomically: true, encoding: .utf8)
        try expectEqual(list(sandbox).count, 4)
        try FileManager.default.removeItem(at: file)
        try expectEqual(list(sandbox).count, 4)
    }

    @Test("a release shows in the list at once, and an interrupted one (its mark left) is read again from the report")
    func releases() throws {
        let sandbox = try fourEntries()
        let first = try #require(try list(sandbox, ["--reason", "unsafe-path"]).first?.id)
        let released = try airlock(["quarantine", "release", first, "--root", sandbox.root.path])
        expectEqual(released.status, 0, "\(released.stderr)")
        try expectEqual(list(sandbox, ["--text", first]).first?.released, true)
        // An index that still says "held", as a stop between the release and its index line leaves it, with the mark still there.
        let file = sandbox.root.appendingPathComponent(index)
        let text = try String(contentsOf: file, encoding: .utf8)
        let stale = text.split(separator: "\n").map { line in
            line.hasPrefix(first) ? line.replacingOccurrences(of: "\tunsafe-path\t1\t", with: "\tunsafe-path\t0\t") : String(line)
        }.joined(separator: "\n") + "\n"
        expect(stale != text && stale.contains(first + "\t"))
        try stale.write(to: file, atomically: true, encoding: .utf8)
        let marks = sandbox.root.appendingPathComponent("state/releasing")
        try FileManager.default.createDirectory(at: marks, withIntermediateDirectories: true)
        try Data().write(to: marks.appendingPathComponent(first))
        try expectEqual(list(sandbox, ["--text", first]).first?.released, true)
        // Without a mark only reindex can know; it reads every report again.
        try FileManager.default.removeItem(at: marks.appendingPathComponent(first))
        try stale.write(to: file, atomically: true, encoding: .utf8)
        let reindex = try airlock(["quarantine", "reindex", "--root", sandbox.root.path])
        expect(reindex.status == 0 && reindex.stderr.contains("4 entries"), "\(reindex.stderr)")
        try expectEqual(list(sandbox, ["--text", first]).first?.released, true)
    }

    @Test("history --per-hour counts outcomes per hour and reason; --since and --limit bound the records")
    func hourlyHistory() throws {
        let sandbox = try fourEntries()
        let hourly = try airlock(["history", "--per-hour", "--since", "1d", "--json", "--root", sandbox.root.path])
        expectEqual(hourly.status, 0, "\(hourly.stderr)")
        let counts = hourly.documents(HourlyCount.self)
        let rejected = counts.filter { $0.event == .rejected }
        expectEqual(rejected.reduce(0) { $0 + $1.count }, 4)
        expectEqual(Set(rejected.compactMap(\.reason)), ["unsafe-path", "unsupported-format"])
        expect(counts.allSatisfy { $0.hour.hasSuffix(":00Z") })
        let newest = try airlock(["history", "--json", "--limit", "2", "--root", sandbox.root.path])
        let all = try airlock(["history", "--json", "--root", sandbox.root.path])
        expectEqual(newest.events.count, 2)
        expectEqual(newest.stdout.split(separator: "\n"), all.stdout.split(separator: "\n").suffix(2), "\(newest.stdout)")
        let first = try #require(all.events.first?.id)
        let one = try airlock(["history", "--json", "--limit", "1", "--id", first, "--root", sandbox.root.path])
        expect(one.events.count == 1 && one.events.first?.id == first && one.events.first?.kind == .rejected,
                "\(one.stdout)")
        Thread.sleep(forTimeInterval: 1.2)
        let none = try airlock(["history", "--json", "--since", "1s", "--root", sandbox.root.path])
        expect(none.status == 0 && none.events.isEmpty, "\(none.stdout)")
    }
}
