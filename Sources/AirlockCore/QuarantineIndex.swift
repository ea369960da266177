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
    func current() throws -> [QuarantineDesk.Summary] {
        let lock = try? desk.holdDesk()
        defer { lock?.close() }
        var names: Set<String> = []
        for name in try desk.layout.quarantine.entryNames() {
            let id = String(decoding: name, as: UTF8.self)
            if QuarantineDesk.isWellFormed(id) { names.insert(id) }
        }
        let stored = read()
        var table = stored ?? [:]
        var changed = stored == nil
        for id in table.keys where !names.contains(id) {
            table[id] = nil
            changed = true
        }
        let marked = releasing()
        for id in names where table[id] == nil || marked.contains(id) {
            guard let entry = try? desk.load(id) else { continue }
            let summary = QuarantineDesk.Summary(entry)
            if table[id] != summary {
                table[id] = summary
                changed = true
            }
        }
        let sorted = table.values.sorted { ($0.decidedAt, $0.id) > ($1.decidedAt, $1.id) }
        if changed, lock != nil { try? write(sorted) }
        return sorted
    }

    /// Rebuilds the index from every report (`quarantine reindex`); returns the number of entries.
    func rebuild() throws -> Int {
        try desk.holdDesk().closeAfter { (_) throws(SystemError) in
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

    /// The stored lines by id, the last of each id winning; nil when there is no
    /// index or it is not ours.
    private func read() -> [String: QuarantineDesk.Summary]? {
        guard let bytes = try? desk.layout.state.open(QuarantineIndex.fileName, [.readOnly, .noFollow]).closeAfter({ (fd) throws(SystemError) in
            try fd.readAll(limit: 1 << 30)
        }), bytes.starts(with: QuarantineIndex.header) else { return nil }
        var table: [String: QuarantineDesk.Summary] = [:]
        table.reserveCapacity(bytes.count / 120)
        for line in bytes[QuarantineIndex.header.count...].split(separator: UInt8(ascii: "\n")) {
            if let summary = QuarantineDesk.Summary(indexLine: line) { table[summary.id] = summary }
        }
        return table
    }

    private func releasing() -> Set<String> {
        guard let marks = try? desk.layout.state.openDirectory(QuarantineDesk.releasingDirectory) else { return [] }
        defer { marks.close() }
        return Set(((try? marks.entryNames()) ?? []).map { String(decoding: $0, as: UTF8.self) })
    }

    private func write(_ summaries: [QuarantineDesk.Summary]) throws(SystemError) {
        var bytes = QuarantineIndex.header
        bytes.reserveCapacity(summaries.count * 160)
        for summary in summaries { bytes += summary.indexLine }
        try desk.layout.state.replaceAtomically(QuarantineIndex.fileName, with: bytes, temporary: QuarantineIndex.temporaryName,
                                                .init(mode: 0o600))
    }
}
