import AirlockSystem

/// `state/journal.generations`: which kept journal file is which, as lines of
/// `INODE GENERATION`, so that an events cursor names one file rather than one
/// inode.
///
/// An inode number alone is not a file's identity: once rotation deletes the
/// oldest file, the filesystem may give its inode to the next `journal.jsonl`,
/// and a cursor into the deleted file would then resume at its offset in an
/// unrelated file. Each journal file therefore gets a generation when it is
/// created, one more than any before, and a rename (rotation) keeps it with its
/// inode here. The journal writer creates a file under a temporary name, records
/// its generation, and only then renames it to `journal.jsonl`; so a reader that
/// opens the journal files before it reads this table finds every file it opened
/// in it. Files written before generations existed are not listed: they are
/// generation 0, as are the cursors of that time (`INODE:OFFSET`).
struct JournalGenerations {
    static let fileName: [UInt8] = Array("journal.generations".utf8)
    static let temporaryName: [UInt8] = Array("journal.generations.tmp".utf8)
    /// Where the writer creates the next `journal.jsonl` before it has a generation.
    static let newFileName: [UInt8] = Array("journal.next".utf8)

    struct Entry: Equatable {
        let inode: UInt64
        let generation: UInt64
    }

    let files: JournalFiles
    /// Who may read the table besides airlock (a reader of the feed needs it).
    var access = FeedAccess(group: nil)

    init(files: JournalFiles, access: FeedAccess = FeedAccess(group: nil)) {
        self.files = files
        self.access = access
    }

    /// The table of the root's own journal, in `state/`.
    init(state: FileDescriptor) {
        self.init(files: .single(state))
    }

    /// The table, oldest first; empty before the first file was created with a generation.
    func entries() throws(SystemError) -> [Entry] {
        let bytes: [UInt8]
        do {
            bytes = try files.directory.open(files.generations, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
                try fd.readAll(limit: 1 << 20)
            }
        } catch where error.errno == .noEntry {
            return []
        }
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2,
                  let inode = UInt64(String(decoding: fields[0], as: UTF8.self)),
                  let generation = UInt64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
            return Entry(inode: inode, generation: generation)
        }
    }

    /// The generation of the kept file with `inode`: 0 for a file from before generations.
    static func generation(of inode: UInt64, in entries: [Entry]) -> UInt64 {
        entries.last(where: { $0.inode == inode })?.generation ?? 0
    }

    /// Gives the file with `inode` the next generation and returns it, dropping the
    /// entries of files no longer kept (`kept`: the inodes of the kept files). Replaces
    /// the table atomically and durably; called under the journal's lock.
    @discardableResult
    func record(_ inode: UInt64, kept: Set<UInt64>) throws(SystemError) -> UInt64 {
        let old = try entries()
        let generation = (old.map(\.generation).max() ?? 0) + 1
        // An inode given to a new file no longer names the file it named before.
        let table = old.filter { kept.contains($0.inode) && $0.inode != inode } + [Entry(inode: inode, generation: generation)]
        let text = table.map { "\($0.inode) \($0.generation)\n" }.joined()
        try files.directory.replaceAtomically(files.generations, with: Array(text.utf8),
                                              temporary: files.generationsTemporary,
                                    AtomicWriteOptions(mode: access.fileMode, ignoresUmask: true, group: access.group))
        return generation
    }
}
