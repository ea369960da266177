import AirlockConfiguration
import AirlockEvents
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import Foundation

/// The append-only audit journal, `state/journal.jsonl`: one JSON object per line,
/// each appended with O_APPEND and made durable with fsync before the call
/// returns. Rotated by size into `journal.1.jsonl` … `journal.N.jsonl`.
///
/// Appends from several threads of one process share their fsyncs (see
/// `JournalBatch`). A `claimed` record is the exception to "durable on return":
/// it decides nothing (recovery works from the claim directory and decodes an
/// undecided claim again whatever the journal says), so it is written without an
/// fsync and becomes durable with the next one, at the latest its drop's own
/// terminal or `deferred` record.
///
/// Writers in several processes (the daemon's workers, `quarantine release` and
/// `purge`) serialise on an flock of `journal.lock`, so a rotation never races an
/// append. A crash can tear at most the line being written; readers skip it.
public struct Journal: Sendable {
    static let current: [UInt8] = Array("journal.jsonl".utf8)
    static let claimedName: [UInt8] = Array("claimed".utf8)

    /// The root's `state/`, where the single daemon's journal is.
    let state: FileDescriptor
    /// The files this journal writes: the root's own, or an instance's in a fleet.
    let files: JournalFiles
    /// The claims whose removals a rotation makes durable first; nil: `state/claimed`.
    let claims: FileDescriptor?
    /// In a fleet, the instance writing: once it has been taken over it appends
    /// nothing more (checked under the lock, just before each write).
    package var fence: InstanceLock?
    let maxBytes: Int64
    let keep: Int
    /// Who may read the journal files besides airlock (see FeedAccess).
    let readers: FeedAccess
    /// Shared by every copy of this value, so the workers of one intake group
    /// their appends.
    let batch = JournalBatch()
    /// Shared the same way: one failed fsync stops every copy (see JournalSyncFailure).
    let syncFailure = JournalSyncFailure()

    public init(state: FileDescriptor, maxBytes: Int64 = 16 << 20, keep: Int = 5, readers: FeedAccess = FeedAccess(group: nil),
                files: JournalFiles? = nil, claims: FileDescriptor? = nil) {
        self.state = state
        self.files = files ?? .single(state)
        self.claims = claims
        self.maxBytes = maxBytes
        self.keep = keep
        self.readers = readers
    }

    /// The journal of `layout` as `configuration` sets it up.
    /// In a fleet, the instance's own journal, `state/journal/NAME.jsonl`.
    public init(_ layout: RootLayout, _ configuration: Configuration) {
        let files = layout.journalDirectory.flatMap { directory in layout.instance.map { JournalFiles(directory: directory, stem: $0) } }
        self.init(state: layout.state, maxBytes: configuration.journalMaxBytes, keep: configuration.journalKeep,
                  readers: configuration.feedAccess, files: files, claims: files == nil ? nil : layout.claimed)
    }

    static func rotated(_ index: Int) -> [UInt8] { Array("journal.\(index).jsonl".utf8) }

    /// Appends one record, `time` first; durable on return unless it is `claimed`.
    public func append(_ record: JournalRecord) throws(SystemError) {
        let line = Journal.line(record)
        guard Journal.waitsForSync(record) else {
            try locked { () throws(SystemError) in try writeLocked([line], sync: false) }
            return
        }
        try batch.append(line) { (lines) throws(SystemError) in
            try locked { () throws(SystemError) in try writeLocked(lines, sync: true) }
        }
    }

    /// Creates the journal's current file, with its generation, where there is
    /// none, so that the first drop's append does not pay for the creation (its
    /// fsyncs of the generation table and of `state/`). `airlock init` calls it;
    /// a root without a journal (an earlier init's, or one just rotated) still
    /// gets it created by its first append.
    public func create() throws(SystemError) {
        try locked { () throws(SystemError) in
            do throws(SystemError) {
                try files.directory.open(files.current, [.readOnly, .noFollow]).close()
            } catch where error.errno == .noEntry {
                try createCurrent()
            }
        }
    }

    /// Whether `append` returns only once the record is durable: every record but
    /// `claimed`, the one that neither decides a drop nor changes anything.
    static func waitsForSync(_ record: JournalRecord) -> Bool {
        if case .claimed = record { return false }
        return true
    }

    static func line(_ record: JournalRecord) -> [UInt8] {
        Array((JournalEntry(time: timestamp(), record: record).line + "\n").utf8)
    }

    /// Appends a record of `event` for `id` unless the journal already holds one of
    /// `unless` for that id; the look and the append are one step under the lock,
    /// so two recovering processes cannot both write it. Returns whether it wrote.
    ///
    /// This is how recovery completes an outcome at most once: the record may have
    /// been written just before the stop that interrupted the outcome.
    @discardableResult
    public func appendOnce(_ record: JournalRecord, unless events: Set<String>) throws(SystemError) -> Bool {
        guard let id = record.id else { preconditionFailure("a \(record.event) record has no id to append once") }
        return try locked { () throws(SystemError) -> Bool in
            if try recordLocked(id: id, events: events) != nil { return false }
            try writeLocked([Journal.line(record)], sync: true)
            return true
        }
    }

    /// Waits, up to `seconds`, until no append to instance `other`'s journal is under
    /// way; does nothing for a single daemon's journal. A take-over calls it once it
    /// has bumped `other`'s generation. `other` looks at its generation under its
    /// journal's lock just before it writes, so an append that looked before the bump
    /// is on disk when this returns, where recovery finds it, and every later one
    /// finds `other` fenced and writes nothing. Without the wait, a frozen `other`
    /// thawed in that gap would write the terminal record recovery also writes.
    /// Throws EWOULDBLOCK when the lock stays held; the take-over is tried again.
    public func awaitAppends(of other: String, seconds: Double) throws(SystemError) {
        guard files != .single(state) else { return }
        let theirs = JournalFiles(directory: files.directory, stem: other)
        let lock = OwnedDescriptor(try theirs.directory.open(theirs.lock, [.readWrite, .create, .noFollow], mode: 0o600))
        guard try lock.descriptor.lockExclusive(within: seconds, every: 5) else {
            throw SystemError("an append of instance \(other) still under way after \(seconds) s", theirs.lock, .wouldBlock)
        }
        lock.descriptor.unlock()
    }

    /// The newest whole record of one of `events` for `id`, if any.
    public func record(id: String, events: Set<String>) throws(SystemError) -> JournalEntry? {
        try locked { () throws(SystemError) in try recordLocked(id: id, events: events) }
    }

    /// Runs `body` holding the journal's flock, so no rotation or append of another
    /// process interleaves.
    private func locked<T>(_ body: () throws(SystemError) -> T) throws(SystemError) -> T {
        try syncFailure.check()
        let lock = OwnedDescriptor(try files.directory.open(files.lock, [.readWrite, .create, .noFollow], mode: 0o600))
        // Held, and so locked, until the body is done.
        defer { withExtendedLifetime(lock) {} }
        try lock.descriptor.lockExclusive()
        return try body()
    }

    /// Writes `lines`, then fsyncs them when `sync` is set. Each line is checked
    /// against the size limit as if appended alone, so a batch rotates the journal
    /// where single appends would; the lines between two rotations go out in one
    /// write.
    private func writeLocked(_ lines: [[UInt8]], sync: Bool) throws(SystemError) {
        var remaining = lines[...]
        var first = true
        // One file per pass: the lines that fit in the current file, then a rotation
        // when some are left. (One descriptor per pass, closed by its pass: a
        // non-copyable owner reassigned in a loop crashes the 6.3 optimiser.)
        while true {
            let rotates = try openCurrent().closeAfter { (file) throws(SystemError) -> Bool in
                // Looked at once the file is open, just before the write, under the lock: a
                // take-over waits for this lock after its bump (`awaitAppends`), so a line
                // that passed the look lands before recovery looks for it. Once an eviction
                // has freed the lock too, only a filesystem that fences the client (CephFS)
                // stops a process frozen here from landing its line after its take-over.
                if first, let detail = fence?.fenced() { throw SystemError(detail, files.current, .stale) }
                #if DEBUG
                // A test freezes the instance in that gap, as a stalled host would.
                if first, sync, fence != nil, CurrentProcess.environment("AIRLOCK_TEST_STOP_AFTER_FENCE") == "1" { CurrentProcess.stop() }
                #endif
                var size = try file.status().size
                var chunk: [UInt8] = []
                while let line = remaining.first {
                    if size > 0 && size + Int64(line.count) > maxBytes {
                        try Journal.write(chunk, to: file)
                        // A `claimed` line may not be durable yet: it is before the file stops being current.
                        try synced(file)
                        return true
                    }
                    chunk += line
                    size += Int64(line.count)
                    remaining.removeFirst()
                }
                try Journal.write(chunk, to: file)
                if sync { try synced(file) }
                return false
            }
            guard rotates else { return }
            first = false
            try rotate()
        }
    }

    /// fsyncs `fd`, a journal file or the state directory; a failure is kept, and
    /// the journal is trusted no more in this process.
    private func synced(_ fd: FileDescriptor) throws(SystemError) {
        do {
            try fd.sync()
        } catch {
            syncFailure.record(error)
            throw error
        }
    }

    /// Appends `bytes` on a fresh line: a crash mid-append leaves a torn last
    /// line, and the torn fragment must not swallow these records too.
    private static func write(_ bytes: [UInt8], to file: FileDescriptor) throws(SystemError) {
        guard !bytes.isEmpty else { return }
        var last: UInt8 = 0x0A
        let end = try file.status().size
        if end > 0 {
            _ = try withUnsafeMutableBytes(of: &last) { raw in
                Result { () throws(SystemError) in try file.read(into: raw, at: end - 1) }
            }.get()
        }
        try file.writeAll(last == 0x0A ? bytes : [0x0A] + bytes)
    }

    /// Opens `journal.jsonl` for appending, creating it with the next generation
    /// when there is none (see JournalGenerations).
    private func openCurrent() throws(SystemError) -> FileDescriptor {
        do {
            return try files.directory.open(files.current, [.readWrite, .append, .noFollow])
        } catch where error.errno == .noEntry {
            try createCurrent()
            return try files.directory.open(files.current, [.readWrite, .append, .noFollow])
        }
    }

    /// Creates an empty `journal.jsonl` whose generation is recorded before the name
    /// exists, so no reader ever sees the file without its generation.
    private func createCurrent() throws(SystemError) {
        let generations = JournalGenerations(files: files, access: readers)
        let directory = files.directory
        // A file left by a crash between its creation and its rename holds no record.
        try? directory.unlink(files.next)
        let inode = try directory.open(files.next, [.readWrite, .create, .exclusive, .noFollow], mode: 0o600)
            .closeAfter { (fd) throws(SystemError) in
                try readers.grant(fd)
                return try fd.status().inode
            }
        var kept: Set<UInt64> = [inode]
        for index in 1...keep {
            if let status = try? directory.status(of: files.rotated(index)) { kept.insert(status.inode) }
        }
        try generations.record(inode, kept: kept)
        try directory.rename(files.next, to: directory, files.current)
        try synced(directory)
    }

    /// Scans the kept files, oldest first; only the lines that mention `id` are
    /// parsed, so a look costs one pass of strstr over the journal.
    private func recordLocked(id: String, events: Set<String>) throws(SystemError) -> JournalEntry? {
        let needle = "\"id\":\"\(id)\""
        var found: JournalEntry?
        for var bytes in try fleetContents() {
            bytes.append(0)
            for line in LineSearch.lines(in: bytes, containing: needle) {
                guard let entry = JournalEntry.read(line), entry.record.id == id, events.contains(entry.record.event) else { continue }
                found = entry
            }
        }
        return found
    }

    /// journal.N-1 → journal.N, …, journal.jsonl → journal.1.jsonl; the oldest beyond `keep` goes.
    private func rotate() throws(SystemError) {
        try syncClaims()
        let directory = files.directory
        try directory.removeTree(files.rotated(keep))
        for index in stride(from: keep - 1, through: 1, by: -1) {
            do {
                try directory.rename(files.rotated(index), to: directory, files.rotated(index + 1))
            } catch where error.errno == .noEntry {
                continue
            }
        }
        try directory.rename(files.current, to: directory, files.rotated(1))
        try synced(directory)
    }

    /// fsyncs `claimed/`. A committed drop's claim is removed without an fsync of
    /// its own: a stop that loses the removal brings the claim back, and recovery
    /// tells from its `accepted` record that it is only to be removed again. The
    /// record must then still be in a kept file, so every removal made so far is
    /// made durable before a rotation moves records towards the oldest file.
    private func syncClaims() throws(SystemError) {
        if let claims {
            try synced(claims)
            return
        }
        do {
            try state.openDirectory(Journal.claimedName).closeAfter { (fd) throws(SystemError) in try synced(fd) }
        } catch where error.errno == .noEntry {
            return
        }
    }

    /// Every whole record, oldest first; a torn or unreadable line is skipped.
    /// - Parameter cutoff: a timestamp as the journal writes them; older records
    ///   are left out before they are parsed (every line begins with its `time`).
    public func records(since cutoff: String? = nil) throws(SystemError) -> [JournalEntry] {
        var result: [JournalEntry] = []
        let cutoffBytes = cutoff.map { Array($0.utf8) }
        for bytes in try fleetContents() {
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                if let cutoffBytes, let time = Journal.leadingTime(line), time.lexicographicallyPrecedes(cutoffBytes) { continue }
                guard let entry = JournalEntry.read(line) else { continue }
                result.append(entry)
            }
        }
        return result
    }

    static let timePrefix: [UInt8] = Array("{\"time\":\"".utf8)
    static let claimMark: [UInt8] = Array("\"event\":\"claimed\"".utf8)

    /// The `time` a line begins with, or nil.
    static func leadingTime(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard line.starts(with: timePrefix) else { return nil }
        let start = line.startIndex + timePrefix.count
        guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return line[start..<end]
    }

    /// Whether the line's `event` (right after its time) is `claimed`.
    static func isClaim(_ line: ArraySlice<UInt8>) -> Bool {
        guard let time = leadingTime(line) else { return false }
        return line[(time.endIndex + 2)...].starts(with: claimMark)
    }

    /// The bytes of every kept file of this journal, oldest first.
    func fileContents() throws(SystemError) -> [[UInt8]] {
        try Journal.contents(of: files, keep: keep, maxBytes: maxBytes)
    }

    /// The bytes of every kept file of the journal `files` names, oldest first.
    static func contents(of files: JournalFiles, keep: Int, maxBytes: Int64) throws(SystemError) -> [[UInt8]] {
        var result: [[UInt8]] = []
        for name in (1...keep).reversed().map(files.rotated) + [files.current] {
            do {
                result.append(try files.directory.open(name, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
                    try fd.readAll(limit: Int(maxBytes) * 2 + (1 << 20))
                })
            } catch where error.errno == .noEntry {
                continue
            }
        }
        return result
    }
}
