import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("events: the journal as a feed with cursors, each record once across restarts and rotation")
struct EventFeedTests {
    /// A root whose journal rotates every few records and keeps many files.
    func smallJournal() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("journal", ["max_bytes": 1500, "keep": 100])
        return sandbox
    }

    func dropBatch(_ sandbox: Sandbox, _ tag: String, count: Int = 4) throws {
        for index in 0..<count { try sandbox.drop(Samples.validZip, as: "\(tag)-\(index).zip") }
        try sandbox.drop(Samples.traversalZip, as: "\(tag)-evil.zip")
        try expectEqual(sandbox.runOnce().status, 0)
    }

    /// A record's identity, without its cursor.
    func key(_ record: Event) -> String {
        "\(record.time ?? "")|\(record.kind)|\(record.id ?? "")"
    }

    @Test("--after a cursor gives exactly the records after it, though the journal rotated in between")
    func resumeAcrossRotation() throws {
        let sandbox = try smallJournal()
        let root = ["--root", sandbox.root.path]
        try dropBatch(sandbox, "a")
        let first = try airlock(["events"] + root)
        expectEqual(first.status, 0, "\(first.stderr)")
        let seen = first.events
        expect(seen.count >= 10)
        expect(seen.allSatisfy { ($0.cursor)?.contains(":") == true })
        let resumeAt = seen.count / 2
        let cursor = try #require(seen[resumeAt].cursor)
        try dropBatch(sandbox, "b")
        try dropBatch(sandbox, "c")
        expect(FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("state/journal.3.jsonl").path),
                "the journal rotated several times")
        let all = try airlock(["events"] + root).events
        let resumed = try airlock(["events", "--after", cursor] + root)
        expectEqual(resumed.status, 0, "\(resumed.stderr)")
        expectEqual(resumed.events.map(key), all.dropFirst(resumeAt + 1).map(key))
        expectEqual(Array(all.prefix(seen.count)).map(key), seen.map(key), "rotation changed no record")
        expectEqual(Set(all.map(key)).count, all.count, "each record once")
        let last = try #require(all.last?.cursor)
        let nothing = try airlock(["events", "--after", last] + root)
        expect(nothing.status == 0 && nothing.stdout.isEmpty)
    }

    @Test("--follow stopped and started again from its last cursor delivers every record once")
    func followAcrossRestart() throws {
        let sandbox = try smallJournal()
        let root = ["--root", sandbox.root.path]
        let output = sandbox.logs.appendingPathComponent("feed.jsonl")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: Binary.airlock)
        follower.arguments = ["events", "--follow"] + root
        follower.standardOutput = handle
        follower.standardError = FileHandle.nullDevice
        try follower.run()
        try dropBatch(sandbox, "a")
        try dropBatch(sandbox, "b")
        let expected = try airlock(["events"] + root).events.count
        func lines() -> [Event] {
            // Whole lines only: the follower may be in the middle of one.
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            return Event.lines(String(text[..<(text.lastIndex(of: "\n").map(text.index(after:)) ?? text.startIndex)]))
        }
        expect(waitFor(seconds: 20) { lines().count >= expected }, "the follower printed \(lines().count) of \(expected)")
        follower.terminate()
        follower.waitUntilExit()
        try handle.close()
        let firstRun = lines()
        let cursor = try #require(firstRun.last?.cursor)
        try dropBatch(sandbox, "c")
        let secondRun = try airlock(["events", "--after", cursor] + root).events
        let all = try airlock(["events"] + root).events
        expectEqual((firstRun + secondRun).map(key), all.map(key), "every record once, in order")
        expect(!secondRun.isEmpty)
    }

    @Test("a cursor whose file was rotated away is refused with 65; a malformed one is a usage error")
    func expired() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("journal", ["max_bytes": 600, "keep": 1])
        let root = ["--root", sandbox.root.path]
        try dropBatch(sandbox, "a", count: 1)
        let cursor = try #require(try airlock(["events"] + root).events.first?.cursor)
        try dropBatch(sandbox, "b")
        let stale = try airlock(["events", "--after", cursor] + root)
        expectEqual(stale.status, 65, "\(stale.stdout)")
        expect(stale.stderr.contains("rotated away"))
        try expectEqual(airlock(["events", "--after", "soon"] + root).status, 64)
    }
}
