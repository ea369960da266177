import AirlockConfiguration
extension EventFeed {
    /// Where a consumer of the feed stands: a position in each journal it has read.
    ///
    /// A position is `INODE:GENERATION:OFFSET`: the journal file's inode and
    /// generation and the byte offset just past a record. A single daemon's root
    /// has one journal, and its cursor is that position alone, as it always was
    /// (`INODE:OFFSET` from before generations is still read). A fleet's root has
    /// the root's own journal (named `-`) and one per instance; its cursor is
    /// `NAME@INODE:GENERATION:OFFSET,…`, a journal it does not name being read from
    /// its start. A cursor of the single form is a position in the root's own
    /// journal: one kept from before the root became a fleet's goes on working.
    public struct Cursor: Equatable, Sendable, CustomStringConvertible {
        public struct Position: Equatable, Sendable, CustomStringConvertible {
            public let inode: UInt64
            public let generation: UInt64
            public let offset: Int64

            /// `INODE:GENERATION:OFFSET`, or `INODE:OFFSET` (generation 0).
            init?(_ text: Substring) {
                let parts = text.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 2 || parts.count == 3,
                      let inode = UInt64(parts[0]), let offset = Int64(parts[parts.count - 1]), offset >= 0 else { return nil }
                guard let generation = parts.count == 3 ? UInt64(parts[1]) : 0 else { return nil }
                self.init(inode: inode, generation: generation, offset: offset)
            }

            init(inode: UInt64, generation: UInt64, offset: Int64) {
                self.inode = inode
                self.generation = generation
                self.offset = offset
            }

            public var description: String { "\(inode):\(generation):\(offset)" }

            /// Further along its journal than `other`; nil when the two cannot be
            /// ordered (files from before generations, two files of one generation).
            func isAfter(_ other: Position) -> Bool? {
                guard generation != 0, other.generation != 0 else {
                    return inode == other.inode && generation == other.generation ? offset > other.offset : nil
                }
                if generation != other.generation { return generation > other.generation }
                return inode == other.inode ? offset > other.offset : nil
            }
        }

        /// The name the root's own journal has in a cursor.
        public static let ownJournal = "-"

        /// By journal: `-`, or an instance's name.
        public let positions: [String: Position]

        public init?(_ text: String) {
            guard text.contains("@") else {
                guard let position = Position(Substring(text)) else { return nil }
                positions = [Cursor.ownJournal: position]
                return
            }
            var positions: [String: Position] = [:]
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let at = part.firstIndex(of: "@") else { return nil }
                let name = String(part[..<at])
                guard name == Cursor.ownJournal || ClusterSettings.problem(with: name) == nil, positions[name] == nil,
                      let position = Position(part[part.index(after: at)...]) else { return nil }
                positions[name] = position
            }
            guard !positions.isEmpty else { return nil }
            self.positions = positions
        }

        init(inode: UInt64, generation: UInt64, offset: Int64) {
            positions = [Cursor.ownJournal: Position(inode: inode, generation: generation, offset: offset)]
        }

        init(positions: [String: Position]) {
            self.positions = positions
        }

        /// Whether this cursor names the root's own journal alone, as a single daemon's does.
        public var isSingleJournal: Bool { positions.count == 1 && positions[Cursor.ownJournal] != nil }

        /// The position in the root's own journal (zeros when it names none).
        var own: Position { positions[Cursor.ownJournal] ?? Position(inode: 0, generation: 0, offset: 0) }
        public var inode: UInt64 { own.inode }
        public var generation: UInt64 { own.generation }
        public var offset: Int64 { own.offset }

        public var description: String {
            if positions.count == 1, let own = positions[Cursor.ownJournal] { return own.description }
            return positions.keys.sorted().map { "\($0)@\(positions[$0]!)" }.joined(separator: ",")
        }

        /// Whether this cursor is further along the feed than `other`: no journal
        /// behind and one ahead. Nil when the two cannot be ordered (see Position.isAfter,
        /// or one ahead in one journal and behind in another).
        public func isAfter(_ other: Cursor) -> Bool? {
            if positions.count == 1, other.positions.count == 1, let mine = positions[Cursor.ownJournal],
               let theirs = other.positions[Cursor.ownJournal] {
                return mine.isAfter(theirs)
            }
            var ahead = false, behind = false
            for name in Set(positions.keys).union(other.positions.keys) {
                switch (positions[name], other.positions[name]) {
                case (nil, nil): continue
                case (_?, nil): ahead = true
                case (nil, _?): behind = true
                case let (mine?, theirs?):
                    guard mine != theirs else { continue }
                    guard let after = mine.isAfter(theirs) else { return nil }
                    if after { ahead = true } else { behind = true }
                }
            }
            if ahead && behind { return nil }
            return ahead
        }
    }
}
