import AirlockSystem

/// `state/quarantine.index`: one line per quarantine entry (see
/// `QuarantineDesk.Summary`), so `quarantine list` does not read every report.
///
/// The index is a cache and is never trusted blindly. Each read lists
/// `quarantine/` (names only) and compares: an entry the index lacks is read
/// from its report and added, one the index has but the quarantine no longer
/// holds (purged) is dropped, and an entry with a release under way or
/// interrupted (a mark in `state/releasing/`) is read again. A missing,
/// foreign or torn index is rebuilt the same way. Releases append the entry's
/// new line (the last line of an id wins) before their mark goes; a reader
/// that found a difference writes the whole index anew (a temporary file,
/// fsync, rename). Both hold the quarantine's flock, so neither loses the
/// other's line. A reader that may not write the state directory still
/// answers, from the index and the differences it found.
struct QuarantineIndex {
    static let fileName: [UInt8] = Array("quarantine.index".utf8)
    static let temporaryName: [UInt8] = Array("quarantine.index.tmp".utf8)
    static let header: [UInt8] = Array("airlock quarantine index 1\n".utf8)

    let desk: QuarantineDesk

    /// Every entry, newest first, the index brought up to date first.
    func current() throws -> [IndexLine] {
        // Held to the end of this scope; without it the index is brought up to date all the same.
        let lock = try? SharedDescriptor(desk.holdDesk())
        defer { withExtendedLifetime(lock) {} }
        var names: [IndexLine.Key: [UInt8]] = [:]
        for name in try desk.layout.quarantine.entryNames() where QuarantineDesk.isWellFormed(bytes: name) { names[IndexLine.Key(name)] = name }
        let stored = read()
        var changed = stored == nil
        var ordered = true
        var lines: [IndexLine] = []
        var position: [IndexLine.Key: Int] = [:]
        lines.reserveCapacity(names.count)
        position.reserveCapacity(names.count)
        if let stored {
            for raw in stored[QuarantineIndex.header.count...].split(separator: UInt8(ascii: "\n")) {
                guard let line = IndexLine(raw) else {
                    changed = true
                    continue
                }
                if let at = position[line.key] {
                    // A release's appended line: the newer state, in the entry's place.
                    lines[at] = line
                    changed = true
                    continue
                }
                if let last = lines.last, IndexLine.newerFirst(line, last) { ordered = false }
                position[line.key] = lines.count
                lines.append(line)
            }
        }
        let before = lines.count
        lines.removeAll { names[$0.key] == nil }
        if lines.count != before { changed = true }
        let marked = releasing()
        var added = false
        for (key, id) in names where position[key] == nil || marked.contains(key) {
            guard let entry = try? desk.load(String(decoding: id, as: UTF8.self)) else { continue }
            let line = IndexLine(QuarantineDesk.Summary(entry))
            if position[key] != nil, let at = lines.firstIndex(where: { $0.key == key }) {
                if lines[at].fields != line.fields {
                    lines[at] = line
                    changed = true
                }
            } else {
                lines.append(line)
                added = true
                changed = true
            }
        }
        if added || !ordered { lines.sort(by: IndexLine.newerFirst) }
        if changed, lock != nil { try? write(lines) }
        return lines
    }

    /// Runs `body` holding the quarantine's flock, let go when it returns.
    private func holdingDesk(_ body: () throws(SystemError) -> Void) throws(SystemError) {
        let lock = try desk.holdDesk()
        try body()
        lock.close()
    }

    /// Rebuilds the index from every report (`quarantine reindex`); returns the number of entries.
    func rebuild() throws -> Int {
        try holdingDesk { () throws(SystemError) in
            do throws(SystemError) {
                try desk.layout.state.unlink(QuarantineIndex.fileName)
            } catch where error.errno == .noEntry {}
        }
        return try current().count
    }

    /// Appends `summary` (a release changed it); the caller holds the quarantine's flock.
    static func note(_ summary: QuarantineDesk.Summary, in state: FileDescriptor) throws(SystemError) {
        let file: FileDescriptor
        do {
            file = try state.open(QuarantineIndex.fileName, [.writeOnly, .append, .noFollow])
        } catch where error.errno == .noEntry {
            return // the next reader builds it, release included
        }
        try file.closeAfter { (fd) throws(SystemError) in
            try fd.writeAll(summary.indexLine)
            try fd.sync()
        }
    }

    /// The index's bytes; nil when there is none or it is not ours.
    private func read() -> [UInt8]? {
        guard let bytes = try? desk.layout.state.open(QuarantineIndex.fileName, [.readOnly, .noFollow]).closeAfter({ (fd) throws(SystemError) in
            try fd.readAll(limit: 1 << 30)
        }), bytes.starts(with: QuarantineIndex.header) else { return nil }
        return bytes
    }

    private func releasing() -> Set<IndexLine.Key> {
        guard let marks = try? OwnedDescriptor(desk.layout.state.openDirectory(QuarantineDesk.releasingDirectory)) else { return [] }
        let names = (try? marks.descriptor.entryNames()) ?? []
        return Set(names.filter { QuarantineDesk.isWellFormed(bytes: $0) }.map { IndexLine.Key($0) })
    }

    private func write(_ lines: [IndexLine]) throws(SystemError) {
        var bytes = QuarantineIndex.header
        bytes.reserveCapacity(lines.count * 160)
        for line in lines { bytes += line.bytes }
        try desk.layout.state.replaceAtomically(QuarantineIndex.fileName, with: bytes, temporary: QuarantineIndex.temporaryName,
                                                .init(mode: 0o600))
    }
}
