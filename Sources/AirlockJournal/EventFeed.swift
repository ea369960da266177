import AirlockConfiguration
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import Foundation

/// `airlock events`: the journal's records as JSON Lines, each with a cursor a
/// consumer keeps to resume after exactly that record.
///
/// A cursor is `INODE:GENERATION:OFFSET`: the journal file's inode and generation
/// and the byte offset just past the record. Rotation renames files
/// (`journal.jsonl` → `journal.1.jsonl` …) and a rename keeps the inode, so a
/// cursor still finds its file and place after any number of rotations, as long as
/// the file is kept (`journal.keep`). The generation tells that file from a later
/// one that was given the inode of a deleted file (see JournalGenerations). Only
/// whole lines are read: a record being appended is picked up once its newline is
/// there. A cursor whose file has been rotated away is refused rather than guessed
/// at; so is one of the older form `INODE:OFFSET` unless its inode is a file
/// written before generations existed.
public struct EventFeed {
    public struct Cursor: Equatable, Sendable, CustomStringConvertible {
        public let inode: UInt64
        public let generation: UInt64
        public let offset: Int64

        public init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            // Two fields: a cursor printed before journal files had generations.
            guard parts.count == 2 || parts.count == 3,
                  let inode = UInt64(parts[0]), let offset = Int64(parts[parts.count - 1]), offset >= 0 else { return nil }
            let generation = parts.count == 3 ? UInt64(parts[1]) : 0
            guard let generation else { return nil }
            self.inode = inode
            self.generation = generation
            self.offset = offset
        }

        init(inode: UInt64, generation: UInt64, offset: Int64) {
            self.inode = inode
            self.generation = generation
            self.offset = offset
        }

        public var description: String { "\(inode):\(generation):\(offset)" }

        /// Whether this cursor is further along the journal than `other`: a later
        /// file (generations only grow) or further into the same one. Nil when the
        /// two cannot be ordered: files from before generations, or two files that
        /// claim one generation.
        public func isAfter(_ other: Cursor) -> Bool? {
            guard generation != 0, other.generation != 0 else {
                return inode == other.inode && generation == other.generation ? offset > other.offset : nil
            }
            if generation != other.generation { return generation > other.generation }
            return inode == other.inode ? offset > other.offset : nil
        }
    }

    /// The cursor names a journal file that is no longer kept.
    public struct Expired: Error, CustomStringConvertible {
        public let description: String
    }

    let state: FileDescriptor
    let keep: Int

    public init(layout: RootLayout, configuration: Configuration) {
        state = layout.state
        keep = configuration.journalKeep
    }

    init(state: FileDescriptor, keep: Int) {
        self.state = state
        self.keep = keep
    }

    /// One record of the feed: its line as `airlock events` prints it (the cursor
    /// first), the cursor to resume after it, and the record itself.
    public struct Item: Sendable {
        public let line: String
        public let cursor: Cursor
        public let record: JournalRecord
    }

    /// The feed of the root at `path`, opened as a consumer can open it (see
    /// FeedAccess): the root's `state/` with O_PATH, since passing through it is
    /// all a consumer may do there, and nothing else of the root. Close it with
    /// `close()`.
    ///
    /// - Throws: `SystemError` of open(2), EACCES for a user who may not read the feed.
    public static func open(root path: String, configuration: Configuration) throws(SystemError) -> EventFeed {
        let root = try FileDescriptor.open(path: path, [.pathOnly, .directory])
        defer { root.close() }
        let state = try root.open(Array("state".utf8), [.pathOnly, .directory, .noFollow])
        // The journal's own name opened now, so that a user who may pass through
        // state/ but not read the journal is told at once, not handed an empty feed.
        do {
            try state.open(Journal.current, [.readOnly, .noFollow]).close()
        } catch where error.errno == .noEntry {
        } catch {
            state.close()
            throw error
        }
        return EventFeed(state: state, keep: configuration.journalKeep)
    }

    public func close() { state.close() }

    /// Every whole record after `cursor` (from the oldest kept with nil), oldest
    /// first, each as its JSON text with `cursor` added first; and the cursor to
    /// continue from.
    public func read(after cursor: Cursor?) throws -> (lines: [String], next: Cursor?) {
        let (items, next) = try items(after: cursor)
        return (items.map(\.line), next)
    }

    /// Every whole record after `cursor` as items, and the cursor to continue from
    /// (past any torn line, which is skipped, never repaired).
    public func items(after cursor: Cursor?) throws -> (items: [Item], next: Cursor?) {
        // Oldest first; a file missing (not rotated yet) is skipped.
        var files: [(inode: UInt64, generation: UInt64, fd: FileDescriptor)] = []
        defer { files.forEach { $0.fd.close() } }
        for name in (1...keep).reversed().map(Journal.rotated) + [Journal.current] {
            guard let fd = try? state.open(name, [.readOnly, .noFollow]) else { continue }
            files.append((try fd.status().inode, 0, fd))
        }
        // Read after the files are open: a file is named journal.jsonl only once its
        // generation is recorded, so every file opened above is in the table.
        let generations = try JournalGenerations(state: state).entries()
        for index in files.indices {
            files[index].generation = JournalGenerations.generation(of: files[index].inode, in: generations)
        }
        var start = 0
        var offset: Int64 = 0
        if let cursor {
            guard let index = files.firstIndex(where: { $0.inode == cursor.inode && $0.generation == cursor.generation }) else {
                throw Expired(description: EventFeed.unmatched(cursor, kept: files.map { ($0.inode, $0.generation) }))
            }
            guard try EventFeed.endsRecord(files[index].fd, at: cursor.offset) else {
                throw Expired(description: "cursor \(cursor) does not fall after a record of its journal file: it was mistyped "
                              + "(cursors are INODE:GENERATION:OFFSET, copied from an event's \"cursor\"); start again without --after")
            }
            start = index
            offset = cursor.offset
        }
        var items: [Item] = []
        var next = cursor
        for (position, file) in files.enumerated() where position >= start {
            let from = position == start ? offset : 0
            let bytes = try remainder(of: file.fd, from: from)
            var lineStart = 0
            for (index, byte) in bytes.enumerated() where byte == 0x0A {
                let line = bytes[lineStart..<index]
                lineStart = index + 1
                let after = Cursor(inode: file.inode, generation: file.generation, offset: from + Int64(lineStart))
                next = after
                guard line.first == UInt8(ascii: "{"), line.count > 1, let entry = JournalEntry.read(line) else { continue }
                items.append(Item(line: "{\"cursor\":\"\(after)\"," + String(decoding: line.dropFirst(), as: UTF8.self),
                                  cursor: after, record: entry.record))
            }
        }
        return (items, next)
    }

    /// Why no kept journal file matches `cursor`. Generations only grow: one newer
    /// than any kept file's, or a kept generation with another inode, was never
    /// handed out by this root; an older one belonged to a file since rotated away.
    static func unmatched(_ cursor: Cursor, kept: [(inode: UInt64, generation: UInt64)]) -> String {
        let newest = kept.map(\.generation).max() ?? 0
        let clash = kept.contains { $0.generation == cursor.generation && $0.inode != cursor.inode && cursor.generation > 0 }
        if cursor.generation > newest || clash {
            return "cursor \(cursor) matches no journal file of this root: it was mistyped or comes from another root "
                + "(cursors are INODE:GENERATION:OFFSET, copied from an event's \"cursor\"); start again without --after"
        }
        return "cursor \(cursor) names a journal file that has been rotated away (journal.keep); start again without --after"
    }

    /// Whether `offset` is the start of the file or just past a newline in it.
    static func endsRecord(_ fd: FileDescriptor, at offset: Int64) throws(SystemError) -> Bool {
        guard offset > 0 else { return true }
        guard offset <= (try fd.status().size) else { return false }
        var byte: UInt8 = 0
        let got = try withUnsafeMutableBytes(of: &byte) { raw in
            Result { () throws(SystemError) in try fd.read(into: raw, at: offset - 1) }
        }.get()
        return got == 1 && byte == 0x0A
    }

    /// The bytes of `fd` from `offset` to its end.
    private func remainder(of fd: FileDescriptor, from offset: Int64) throws(SystemError) -> [UInt8] {
        let size = try fd.status().size
        guard size > offset else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(size - offset))
        var done = 0
        while done < bytes.count {
            let n = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in
                    try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]), at: offset + Int64(done))
                }
            }.get()
            if n == 0 { break }
            done += n
        }
        return Array(bytes[0..<done])
    }
}
