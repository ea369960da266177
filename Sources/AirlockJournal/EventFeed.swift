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
/// written before generations existed. A fleet's root has a journal per instance
/// besides its own: the feed reads them all, and its cursor names a position in
/// each (see Cursor).
public struct EventFeed {
    /// The cursor names a journal file that is no longer kept.
    public struct Expired: Error, CustomStringConvertible {
        public let description: String
    }

    let state: FileDescriptor
    let keep: Int
    /// What keeps `state` open while any copy of the feed lives: nil when the
    /// caller lends it and keeps it open itself.
    private let owner: StateOwner?

    private enum StateOwner {
        /// The feed opened `state/` itself.
        case own(SharedDescriptor)
        /// `state/` is the layout's, open while the layout is.
        case layout(RootLayout)
    }

    public init(layout: RootLayout, configuration: Configuration) {
        state = layout.state
        keep = configuration.journalKeep
        owner = .layout(layout)
    }

    init(state: FileDescriptor, keep: Int) {
        self.state = state
        self.keep = keep
        owner = nil
    }

    private init(own state: SharedDescriptor, keep: Int) {
        self.state = state.descriptor
        self.keep = keep
        owner = .own(state)
    }

    /// One record of the feed: its line as `airlock events` prints it (the cursor
    /// first), the cursor to resume after it, and the record itself.
    public struct Item: Sendable {
        public let line: String
        public let cursor: Cursor
        public let record: JournalRecord
        /// The journal the record is in: `-`, or an instance's name.
        public var journal = Cursor.ownJournal

        public init(line: String, cursor: Cursor, record: JournalRecord, journal: String = Cursor.ownJournal) {
            self.line = line
            self.cursor = cursor
            self.record = record
            self.journal = journal
        }

        /// Whether `cursor` stands at or past this record (nil when that cannot be told).
        public func isCovered(by cursor: Cursor) -> Bool? {
            guard let mine = self.cursor.positions[journal] else { return nil }
            guard let theirs = cursor.positions[journal] else { return false }
            if mine == theirs { return true }
            return mine.isAfter(theirs).map { !$0 }
        }
    }

    /// The feed of the root at `path`, opened as a consumer can open it (see
    /// FeedAccess): the root's `state/` with O_PATH, since passing through it is
    /// all a consumer may do there, and nothing else of the root. It closes when
    /// the last copy of the feed goes.
    ///
    /// - Throws: `SystemError` of open(2), EACCES for a user who may not read the feed.
    public static func open(root path: String, configuration: Configuration) throws(SystemError) -> EventFeed {
        let root = OwnedDescriptor(try FileDescriptor.open(path: path, [.pathOnly, .directory]))
        let state = OwnedDescriptor(try root.descriptor.open(Array("state".utf8), [.pathOnly, .directory, .noFollow]))
        try checkJournalReadable(in: state.descriptor)
        return EventFeed(own: SharedDescriptor(state), keep: configuration.journalKeep)
    }

    /// Opens the journal's own name, so that a user who may pass through state/ but
    /// not read the journal is told at once, not handed an empty feed. (Apart from
    /// `open(root:configuration:)`: a do/catch between an owner and its consuming
    /// use crashes the Swift 6.3 compiler.)
    private static func checkJournalReadable(in state: FileDescriptor) throws(SystemError) {
        do {
            OwnedDescriptor(try state.open(Journal.current, [.readOnly, .noFollow])).close()
        } catch where error.errno == .noEntry {
        }
    }

    /// Every whole record after `cursor` (from the oldest kept with nil), oldest
    /// first, each as its JSON text with `cursor` added first; and the cursor to
    /// continue from.
    public func read(after cursor: Cursor?) throws -> (lines: [String], next: Cursor?) {
        let (items, next) = try items(after: cursor)
        return (items.map(\.line), next)
    }

    /// Every whole record after `cursor` as items, and the cursor to continue from
    /// (past any torn line, which is skipped, never repaired). In a fleet's root the
    /// journals' records come merged by their times, each journal's in its own order.
    public func items(after cursor: Cursor?) throws -> (items: [Item], next: Cursor?) {
        let (journals, directory) = try JournalFiles.every(in: state)
        defer { withExtendedLifetime(directory) {} }
        do {
            var streams: [(name: String, items: [(time: ArraySlice<UInt8>, item: Item)], next: Cursor.Position?)] = []
            for (name, files) in journals {
                let (items, next) = try EventFeed.items(of: files, keep: keep, after: cursor?.positions[name], name: name)
                streams.append((name, items, next))
            }
            if streams.count == 1 {
                let only = streams[0]
                let items = only.items.map { entry in
                    Item(line: EventFeed.line(entry.item.record, rawLine: entry.item.line, cursor: entry.item.cursor),
                         cursor: entry.item.cursor, record: entry.item.record, journal: entry.item.journal)
                }
                return (items, only.next.map { Cursor(positions: [Cursor.ownJournal: $0]) } ?? cursor)
            }
            var positions = cursor?.positions ?? [:]
            var items: [Item] = []
            // Each journal's records stay in the order they were written, whatever
            // their times: a position in a journal covers every record before it,
            // so a record passed over for a later-written one with an earlier time
            // would be skipped by a reader resuming in between. (A record's time is
            // taken before it waits for the journal's lock, so an instance's
            // workers can write them slightly out of time order.) Among the
            // journals, the earliest next record goes first, the first journal's on
            // a tie.
            var heads = Array(repeating: 0, count: streams.count)
            while true {
                var chosen: Int?
                for index in streams.indices where heads[index] < streams[index].items.count {
                    guard let best = chosen else { chosen = index; continue }
                    if streams[index].items[heads[index]].time.lexicographicallyPrecedes(streams[best].items[heads[best]].time) {
                        chosen = index
                    }
                }
                guard let index = chosen else { break }
                let stream = streams[index]
                let item = stream.items[heads[index]].item
                heads[index] += 1
                positions[stream.name] = item.cursor.positions[stream.name]
                let cursor = Cursor(positions: positions)
                items.append(Item(line: EventFeed.line(item.record, rawLine: item.line, cursor: cursor), cursor: cursor, record: item.record,
                                  journal: stream.name))
            }
            for stream in streams { if let next = stream.next { positions[stream.name] = next } }
            return (items, positions.isEmpty ? nil : Cursor(positions: positions))
        }
    }

    /// The line `airlock events` prints: the record's line with `cursor` first.
    static func line(_ record: JournalRecord, rawLine: String, cursor: Cursor) -> String {
        "{\"cursor\":\"\(cursor)\"," + rawLine
    }

    /// The records of one journal after `position`, each with its time and an item
    /// whose `line` is the record's line without its opening brace (EventFeed.line
    /// completes it) and whose cursor names this journal alone; and the position
    /// to continue from.
    static func items(of journal: JournalFiles, keep: Int, after position: Cursor.Position?,
                      name: String) throws -> (items: [(time: ArraySlice<UInt8>, item: Item)], next: Cursor.Position?) {
        // Oldest first; a file missing (not rotated yet) is skipped.
        var files: [(inode: UInt64, generation: UInt64, fd: FileDescriptor)] = []
        var open = OwnedDescriptors()
        for fileName in (1...keep).reversed().map(journal.rotated) + [journal.current] {
            guard let fd = try? journal.directory.open(fileName, [.readOnly, .noFollow]) else { continue }
            let owned = OwnedDescriptor(fd)
            files.append((try owned.descriptor.status().inode, 0, owned.descriptor))
            open.append(owned)
        }
        // Read after the files are open: a file is named current only once its
        // generation is recorded, so every file opened above is in the table.
        let generations = try JournalGenerations(files: journal).entries()
        for index in files.indices {
            files[index].generation = JournalGenerations.generation(of: files[index].inode, in: generations)
        }
        var start = 0
        var offset: Int64 = 0
        if let position {
            let shown = name == Cursor.ownJournal ? "\(position)" : "\(name)@\(position)"
            guard let index = files.firstIndex(where: { $0.inode == position.inode && $0.generation == position.generation }) else {
                throw Expired(description: EventFeed.unmatched(shown, position, kept: files.map { ($0.inode, $0.generation) }))
            }
            guard try EventFeed.endsRecord(files[index].fd, at: position.offset) else {
                throw Expired(description: "cursor \(shown) does not fall after a record of its journal file: it was mistyped "
                              + "(cursors are INODE:GENERATION:OFFSET, copied from an event's \"cursor\"); start again without --after")
            }
            start = index
            offset = position.offset
        }
        var items: [(time: ArraySlice<UInt8>, item: Item)] = []
        var next = position
        for (index, file) in files.enumerated() where index >= start {
            let from = index == start ? offset : 0
            let bytes = try EventFeed.remainder(of: file.fd, from: from)
            var lineStart = 0
            for (index, byte) in bytes.enumerated() where byte == 0x0A {
                let line = bytes[lineStart..<index]
                lineStart = index + 1
                let after = Cursor.Position(inode: file.inode, generation: file.generation, offset: from + Int64(lineStart))
                next = after
                guard line.first == UInt8(ascii: "{"), line.count > 1, let entry = JournalEntry.read(line) else { continue }
                let cursor = Cursor(positions: [name: after])
                let rest = String(decoding: line.dropFirst(), as: UTF8.self)
                items.append((Journal.leadingTime(line) ?? [], Item(line: rest, cursor: cursor, record: entry.record, journal: name)))
            }
        }
        return (items, next)
    }

    /// Why no kept journal file matches `cursor`. Generations only grow: one newer
    /// than any kept file's, or a kept generation with another inode, was never
    /// handed out by this root; an older one belonged to a file since rotated away.
    static func unmatched(_ shown: String, _ cursor: Cursor.Position, kept: [(inode: UInt64, generation: UInt64)]) -> String {
        let newest = kept.map(\.generation).max() ?? 0
        let clash = kept.contains { $0.generation == cursor.generation && $0.inode != cursor.inode && cursor.generation > 0 }
        if cursor.generation > newest || clash {
            return "cursor \(shown) matches no journal file of this root: it was mistyped or comes from another root "
                + "(cursors are INODE:GENERATION:OFFSET, copied from an event's \"cursor\"); start again without --after"
        }
        return "cursor \(shown) names a journal file that has been rotated away (\(NumericSetting.journalKeep.name)); start again without --after"
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
    private static func remainder(of fd: FileDescriptor, from offset: Int64) throws(SystemError) -> [UInt8] {
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
