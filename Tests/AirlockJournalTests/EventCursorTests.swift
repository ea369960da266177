@testable import AirlockEvents
@testable import AirlockJournal
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The cursor a feed line carries, which must be a string.
func printedCursor(_ line: String) throws -> String {
    struct Printed: Decodable { let cursor: String }
    return try JSONDecoder().decode(Printed.self, from: Data(line.utf8)).cursor
}

/// An events cursor names one journal file, not one inode: rotation deletes the
/// oldest file, and the filesystem may hand its inode to the next one.
@Suite("EventFeed: a cursor resumes in its own file or is refused")
struct EventCursorTests {
    typealias StateDirectory = JournalLookupTests.StateDirectory

    private func claimed(_ journal: Journal, _ number: Int) throws {
        try journal.append(.claimed(.init(drop: .init(id: "20261130T000000Z-\(String(number, radix: 16))", drop: "x.zip"))))
    }

    private func isExpired(_ feed: EventFeed, _ cursor: EventFeed.Cursor) -> Bool {
        do {
            _ = try feed.read(after: cursor)
            return false
        } catch {
            return error is EventFeed.Expired
        }
    }

    @Test("a cursor with the inode of the current file but an earlier generation is refused")
    func sameInodeOtherFile() throws {
        let state = try StateDirectory()
        let journal = Journal(state: state.descriptor, maxBytes: 400, keep: 1)
        let feed = EventFeed(state: state.descriptor, keep: 1)
        for number in 0..<12 { try claimed(journal, number) }
        let current = try #require(try feed.read(after: nil).next)
        expect(current.generation > 1, "the journal rotated")
        // What a cursor into a deleted file looks like once its inode was given to
        // the current file: the inode matches, the generation does not.
        let stale = try #require(EventFeed.Cursor("\(current.inode):\(current.generation - 1):\(current.offset)"))
        expect(isExpired(feed, stale))
        try expect(feed.read(after: current).lines.isEmpty)
    }

    @Test("however the filesystem reuses inodes, a cursor into a rotated-away file is refused")
    func rotatedAway() throws {
        let state = try StateDirectory()
        let journal = Journal(state: state.descriptor, maxBytes: 400, keep: 1)
        let feed = EventFeed(state: state.descriptor, keep: 1)
        var cursors: [EventFeed.Cursor] = []
        var filesSeen: Set<String> = []
        var reused = 0
        for number in 0..<120 {
            try claimed(journal, number)
            let page = try feed.read(after: nil)
            let kept = Set(try page.lines.map { try printedCursor($0) }.compactMap(EventFeed.Cursor.init).map { "\($0.inode):\($0.generation)" })
            let next = try #require(page.next)
            if !filesSeen.contains("\(next.inode):\(next.generation)") && cursors.contains(where: { $0.inode == next.inode }) { reused += 1 }
            filesSeen.insert("\(next.inode):\(next.generation)")
            cursors.append(next)
            for cursor in cursors where !kept.contains("\(cursor.inode):\(cursor.generation)") {
                expect(isExpired(feed, cursor), "\(cursor) resumed in a file it does not name")
            }
        }
        // Where the filesystem reuses inodes (ext4 does, often at once), this ran the
        // case the generation is for; elsewhere it checked the plain refusal only.
        print("journal files that reused a deleted file's inode: \(reused)")
    }

    @Test("a cursor of the form INODE:OFFSET still resumes in a file written before generations")
    func olderCursor() throws {
        let state = try StateDirectory()
        // A journal written before generations: no table, no recorded generation.
        expect(FileManager.default.createFile(atPath: state.path + "/journal.jsonl", contents: nil))
        for number in 0..<3 {
            let entry = JournalEntry(time: timestamp(), record: .claimed(.init(drop: .init(id: "old-\(number)", drop: "x.zip"))))
            try state.appendRaw(Array((entry.line + "\n").utf8))
        }
        let feed = EventFeed(state: state.descriptor, keep: 2)
        let first = try #require(try feed.read(after: nil).lines.first)
        let printed = try printedCursor(first)
        let parsed = try #require(EventFeed.Cursor(printed))
        expectEqual(parsed.generation, 0)
        let older = try #require(EventFeed.Cursor("\(parsed.inode):\(parsed.offset)"))
        try expectEqual(feed.read(after: older).lines.count, 2)
        // Rotation moves the old file aside; a new journal.jsonl has a generation.
        let journal = Journal(state: state.descriptor, maxBytes: 300, keep: 2)
        try claimed(journal, 1)
        try claimed(journal, 2)
        let current = try #require(try feed.read(after: nil).next)
        expectEqual(current.generation, 1)
        try expect(feed.read(after: older).lines.count >= 4, "the old file, now journal.1.jsonl, is still found")
        expect(isExpired(feed, try #require(EventFeed.Cursor("\(current.inode):\(current.offset)"))))
    }

    @Test("malformed cursors are not cursors")
    func malformed() {
        for text in ["", "soon", "1", "1:2:3:4", "1::3", "-1:2", "1:-2", "1:x:3"] {
            expectEqual(EventFeed.Cursor(text), nil, "\(text)")
        }
        expectEqual(EventFeed.Cursor("12:3:45")?.description, "12:3:45")
        expectEqual(EventFeed.Cursor("12:45")?.description, "12:0:45")
    }
}
