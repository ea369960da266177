@testable import AirlockConfiguration
@testable import AirlockJournal
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A fleet's journals: instance names, feed cursors across journals, the journals
/// read together and exactly once across them.
@Suite("Fleet journals: instance names, cursors across journals, merged journals, exactly once across them")
struct FleetJournalTests {
    typealias StateDirectory = JournalLookupTests.StateDirectory

    @Test("an instance name is 1 to 64 bytes of letters, digits, '.', '_', '-', begins with a letter or digit, and is no claim id",
          arguments: [("a", true), ("host-1.example_2", true), ("9lives", true), (String(repeating: "x", count: 64), true),
                      ("", false), (".a", false), ("-a", false), ("a/b", false), ("a b", false), ("é", false),
                      (String(repeating: "x", count: 65), false), ("20261201T101010Z-deadbeef", false)])
    func instanceNames(_ name: String, _ accepted: Bool) {
        expectEqual((ClusterSettings.problem(with: name) == nil), accepted, "\(name)")
    }

    @Test("a fleet's cursor names a position in each journal and prints back as it was read; a single journal's stays INODE:GENERATION:OFFSET")
    func cursorForms() throws {
        let composite = try #require(EventFeed.Cursor("a@10:1:200,-@5:2:40,b@11:1:0"))
        expectEqual(composite.description, "-@5:2:40,a@10:1:200,b@11:1:0")
        expect(composite.positions["a"]?.offset == 200 && composite.inode == 5 && composite.offset == 40)
        expectEqual(EventFeed.Cursor("12:3:45")?.description, "12:3:45")
        expectEqual(EventFeed.Cursor("-@12:3:45")?.description, "12:3:45", "the root's own journal alone prints as before")
        expectEqual(EventFeed.Cursor("12:45")?.positions["-"]?.generation, 0)
        for bad in ["a@1", "@1:2:3", "a@1:2:3,a@1:2:4", "a@1:2:3,", ".x@1:2:3", "a@1:2:-3", "a@x:2:3"] {
            expectEqual(EventFeed.Cursor(bad), nil, "\(bad)")
        }
    }

    @Test("one cursor is after another when it is ahead in some journal and behind in none")
    func cursorOrder() throws {
        let base = try #require(EventFeed.Cursor("a@10:1:200,b@11:1:50"))
        try expectEqual(#require(EventFeed.Cursor("a@10:1:300,b@11:1:50")).isAfter(base), true)
        try expectEqual(#require(EventFeed.Cursor("a@10:1:200,b@11:1:50,c@12:1:5")).isAfter(base), true)
        expectEqual(base.isAfter(base), false)
        try expectEqual(#require(EventFeed.Cursor("a@10:1:300,b@11:1:10")).isAfter(base), nil)
        try expectEqual(#require(EventFeed.Cursor("a@10:1:100")).isAfter(base), false)
    }

    /// A journal of instance `name` in `state/journal/`.
    private func instanceJournal(_ state: StateDirectory, _ name: String) throws -> Journal {
        try? state.descriptor.makeDirectory(Array("journal".utf8), mode: 0o700)
        let directory = try state.descriptor.openDirectory(Array("journal".utf8))
        return Journal(state: state.descriptor, files: JournalFiles(directory: directory, stem: name), claims: state.descriptor)
    }

    private func accepted(_ id: String) -> JournalRecord {
        .accepted(.init(drop: .init(id: id, drop: "\(id).zip"), output: "outbox/\(id)", files: 1, bytes: 1))
    }

    @Test("a record in any instance's journal keeps recovery in another from writing a second (exactly once across the fleet)")
    func appendOnceAcrossJournals() throws {
        let state = try StateDirectory()
        let a = try instanceJournal(state, "a"), b = try instanceJournal(state, "b")
        try a.append(accepted("20261201T000000Z-00000001-a"))
        try expectEqual(b.appendOnce(accepted("20261201T000000Z-00000001-a"), unless: ["accepted", "rejected"]), false)
        try expectEqual(b.appendOnce(accepted("20261201T000000Z-00000002-a"), unless: ["accepted", "rejected"]), true)
        try expect(b.record(id: "20261201T000000Z-00000001-a", events: ["accepted"]) != nil)
        let single = Journal(state: state.descriptor)
        try single.append(accepted("20261201T000000Z-00000003"))
        try expectEqual(a.appendOnce(accepted("20261201T000000Z-00000003"), unless: ["accepted", "rejected"]), false)
        try expectEqual(single.records().count, 3, "readers see every journal")
    }

    @Test("a take-over's wait for another instance's append: free at once when no append holds that journal's lock, EWOULDBLOCK past its time when one does, nothing for a single journal")
    func awaitAppendsOfAnotherInstance() throws {
        let state = try StateDirectory()
        let a = try instanceJournal(state, "a"), b = try instanceJournal(state, "b")
        try a.append(accepted("20261201T000000Z-00000001-a"))
        try b.awaitAppends(of: "a", seconds: 0.05)
        // a, stalled inside an append: its journal's lock held.
        let lock = open(state.path + "/journal/a.lock", O_RDWR | O_CLOEXEC)
        try #require(lock >= 0)
        defer { close(lock) }
        try #require(flock(lock, LOCK_EX) == 0)
        let started = ContinuousClock.now
        do {
            try b.awaitAppends(of: "a", seconds: 0.2)
            Issue.record("returned while a's append held its lock")
        } catch {
            expectEqual(error.errno, .wouldBlock)
        }
        expect(ContinuousClock.now - started >= .milliseconds(200))
        // Let go part-way through the wait: it returns then, not at its end.
        let release = DispatchWorkItem { flock(lock, LOCK_UN) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1, execute: release)
        let waiting = ContinuousClock.now
        try b.awaitAppends(of: "a", seconds: 10)
        expect(ContinuousClock.now - waiting < .seconds(5))
        try Journal(state: state.descriptor).awaitAppends(of: "a", seconds: 0)
    }

    @Test("the feed merges the journals in time order; resuming after any item yields exactly the rest, a single-journal cursor included")
    func feedAcrossJournals() throws {
        let state = try StateDirectory()
        let single = Journal(state: state.descriptor)
        try single.append(accepted("20261201T000000Z-00000000"))
        let feed = EventFeed(state: state.descriptor, keep: 5)
        let before = try feed.items(after: nil)
        let oldCursor = try #require(before.next)
        expectEqual(oldCursor.description.contains("@"), false)
        let a = try instanceJournal(state, "a"), b = try instanceJournal(state, "b")
        for index in 1...6 {
            // Records carry milliseconds: apart by more, so the order by time is this one.
            usleep(3000)
            try (index % 2 == 0 ? a : b).append(accepted("20261201T000000Z-0000000\(index)"))
        }
        let all = try feed.items(after: nil).items
        expectEqual(all.compactMap(\.record.id), (0...6).map { "20261201T000000Z-0000000\($0)" })
        for (index, item) in all.enumerated() {
            let rest = try feed.items(after: item.cursor).items
            expectEqual(rest.compactMap(\.record.id), all[(index + 1)...].compactMap(\.record.id), "after \(item.cursor)")
        }
        let upgraded = try feed.items(after: oldCursor).items
        expectEqual(upgraded.count, 6, "the cursor printed before the fleet resumes after its record")
        expectEqual(all.last?.line.hasPrefix("{\"cursor\":\"-@"), true)
    }

    @Test("a journal written slightly out of time order keeps its order in the merged feed: resuming after any item skips nothing")
    func feedKeepsEachJournalsOrder() throws {
        let state = try StateDirectory()
        let a = try instanceJournal(state, "a"), b = try instanceJournal(state, "b")
        try a.append(accepted("20261201T000000Z-00000001-a"))
        try b.append(accepted("20261201T000000Z-00000002-b"))
        // An instance's workers take a record's time before the journal's lock, so
        // one written later can carry an earlier time: a3 is written after a2 and
        // is older than it, and older than b4.
        let lines = [("a", "2999-01-01T00:00:05.000Z", "20261201T000000Z-00000002-a"),
                     ("a", "2999-01-01T00:00:03.000Z", "20261201T000000Z-00000003-a"),
                     ("b", "2999-01-01T00:00:04.000Z", "20261201T000000Z-00000004-b")]
        for (journal, time, id) in lines {
            let handle = try #require(FileHandle(forWritingAtPath: state.path + "/journal/\(journal).jsonl"))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((JournalEntry(time: time, record: accepted(id)).line + "\n").utf8))
            try handle.close()
        }
        let feed = EventFeed(state: state.descriptor, keep: 5)
        let all = try feed.items(after: nil).items
        let ids = all.compactMap(\.record.id)
        expectEqual(Set(ids).count, 5, "\(ids)")
        expectEqual(ids.filter { $0.hasSuffix("-a") }, ["20261201T000000Z-00000001-a", "20261201T000000Z-00000002-a", "20261201T000000Z-00000003-a"],
                    "a journal's records in the order it wrote them")
        for (index, item) in all.enumerated() {
            let rest = try feed.items(after: item.cursor).items
            expectEqual(rest.compactMap(\.record.id), Array(ids[(index + 1)...]), "after \(item.cursor)")
        }
    }
}
