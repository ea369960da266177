import AirlockEvents
import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation

// How `quarantine release` and `purge` change an entry so that a stop at any
// instant still leaves exactly one `released` or `purged` record, written by the
// command itself or by whoever next runs the quarantine's recovery: the next
// release or purge, and every start of `airlock run`. Release, purge and that
// recovery hold one flock (state/quarantine.lock), so they never interleave.
//
// The rule is the intake's: a durable mark says what is under way before the
// step that makes it visible, the record is appended before the mark goes, and
// recovery completes a change that became visible and forgets one that did not.
//
//   release                        on disk                                recovery
//   L0 held                        quarantine/ID/{drop,report.json}       nothing
//   L1 marked                      + state/releasing/ID names inbox/NAME  drop still in the entry: remove the
//                                                                         mark (nothing happened, no record)
//   L2 moved                       drop renamed to inbox/NAME             note it in the report's history
//                                  (RENAME_NOREPLACE; the mark is         unless there, append `released`
//                                  rewritten before each candidate)       unless journalled, remove the mark
//   L3 noted                       + history says released                the same, minus the history
//   L4 journalled                  + `released` in the journal            remove the mark
//   -- released                    entry without drop, no mark            nothing
//
//   purge                          on disk                                recovery
//   P0 listed                      quarantine/ID                          nothing
//   P1 hidden                      renamed whole to state/purging/ID      append `purged` (from its report)
//                                                                         unless journalled, remove it
//   P2 journalled                  + `purged` in the journal; removal     remove what is left
//                                  may have begun
//   -- purged                      nothing                                nothing
extension QuarantineDesk {
    static let releasingDirectory: [UInt8] = Array("releasing".utf8)
    static let lockName: [UInt8] = Array("quarantine.lock".utf8)

    /// Takes the quarantine's flock; closing the descriptor lets it go.
    func holdDesk() throws(SystemError) -> FileDescriptor {
        let lock = try layout.state.open(QuarantineDesk.lockName, [.readWrite, .create, .noFollow], mode: 0o600)
        do {
            try lock.lockExclusive()
        } catch {
            lock.close()
            throw error
        }
        return lock
    }

    /// Finishes the releases and purges a stop interrupted.
    package func recover() throws(SystemError) {
        let lock = try holdDesk()
        defer { lock.close() }
        try recoverHoldingDesk()
    }

    func recoverHoldingDesk() throws(SystemError) {
        if let releasing = try openIfPresent(QuarantineDesk.releasingDirectory) {
            defer { releasing.close() }
            for id in try releasing.entryNames() {
                try recoverRelease(id, marks: releasing)
            }
        }
        if let purging = try openIfPresent(QuarantineDesk.purgingDirectory) {
            defer { purging.close() }
            for id in try purging.entryNames() {
                try finishPurge(id, in: purging)
            }
        }
    }

    private func recoverRelease(_ id: [UInt8], marks: FileDescriptor) throws(SystemError) {
        let name = try marks.open(id, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in try fd.readAll(limit: 4096) }
        let directory: FileDescriptor
        do {
            directory = try layout.quarantine.openDirectory(id)
        } catch where error.errno == .noEntry {
            try forget(id, marks: marks)
            return
        }
        defer { directory.close() }
        let moved = (try? directory.status(of: QuarantineDesk.dropFile)) == nil
        guard moved, !name.isEmpty else {
            try forget(id, marks: marks)
            return
        }
        try finishRelease(id, directory: directory, to: name, marks: marks)
    }

    /// L0 → L2: renames the entry's drop into the inbox under the first free
    /// candidate name, each candidate marked before it is tried; then finishes.
    func moveToInbox(_ id: String, inbox: FileDescriptor, _ name: [UInt8], by analyst: String?,
                     note: String? = nil) throws(SystemError) -> [UInt8]? {
        let idBytes = Array(id.utf8)
        let directory = try layout.quarantine.openDirectory(idBytes)
        defer { directory.close() }
        let marks = try openMaking(QuarantineDesk.releasingDirectory)
        defer { marks.close() }
        for candidate in QuarantineDesk.inboxCandidates(name) {
            try marks.open(idBytes, [.writeOnly, .create, .truncate, .noFollow], mode: 0o600).closeAfter { (fd) throws(SystemError) in
                try fd.writeAll(candidate)
                try fd.sync()
            }
            try marks.sync()
            CrashPoint.releaseMarked.reach()
            do throws(SystemError) {
                try directory.renameNoReplace(QuarantineDesk.dropFile, to: inbox, candidate)
            } catch where error.errno == .exists {
                continue
            }
            try inbox.sync()
            try directory.sync()
            CrashPoint.releaseMoved.reach()
            try finishRelease(idBytes, directory: directory, to: candidate, marks: marks, by: analyst, note: note)
            return candidate
        }
        try forget(idBytes, marks: marks)
        return nil
    }

    /// L2 → released: the history, the record, then the mark goes.
    private func finishRelease(_ id: [UInt8], directory: FileDescriptor, to name: [UInt8], marks: FileDescriptor,
                               by analyst: String? = nil, note: String? = nil) throws(SystemError) {
        let text = String(decoding: id, as: UTF8.self)
        // A report that does not read is left as it is rather than replaced by its history alone.
        var report = try? load(text).report
        if var whole = report, whole.releasedAt == nil {
            whole.history = (whole.history ?? []) + [.init(action: "released", at: timestamp(), to: "inbox/" + EscapedName(name).text, by: analyst)]
            try writeReport(whole, in: directory)
            report = whole
        }
        CrashPoint.releaseNoted.reach()
        let drop = report.flatMap { [UInt8](hex: $0.drop_hex) }.map { EscapedName($0).text }
        try journal.appendOnce(.released(.init(id: text, drop: drop ?? report?.drop ?? "", to: "inbox/" + EscapedName(name).text,
                                               sha256: report?.sha256, size: report?.dropSize, by: analyst,
                                               releaseReason: note)),
                               unless: ["released"])
        CrashPoint.releaseJournalled.reach()
        // The index learns of the release before the mark that makes readers look again goes.
        if let entry = try? load(text) { try QuarantineIndex.note(Summary(entry), in: layout.state) }
        try forget(id, marks: marks)
    }

    private func forget(_ id: [UInt8], marks: FileDescriptor) throws(SystemError) {
        try marks.removeTree(id)
        try marks.sync()
    }

    func openPurging() throws(SystemError) -> FileDescriptor {
        try openMaking(QuarantineDesk.purgingDirectory)
    }

    /// P0 → P1, then finishes; an entry purged meanwhile is skipped.
    /// `note` is the operator's reason, for the record; a purge finished by
    /// recovery after a crash records none.
    func purge(_ id: [UInt8], into purging: FileDescriptor, note: String? = nil, by analyst: String? = nil) throws(SystemError) {
        do {
            try layout.quarantine.rename(id, to: purging, id)
        } catch where error.errno == .noEntry {
            return
        }
        try layout.quarantine.sync()
        try purging.sync()
        CrashPoint.purgeHidden.reach()
        try finishPurge(id, in: purging, note: note, by: analyst)
    }

    /// P1 → purged: the record (from the entry's report), then the removal.
    private func finishPurge(_ id: [UInt8], in purging: FileDescriptor, note: String? = nil, by analyst: String? = nil) throws(SystemError) {
        let text = String(decoding: id, as: UTF8.self)
        let bytes = try? purging.openDirectory(id).closeAfter { (directory) throws(SystemError) in
            try directory.open(QuarantineDesk.reportFile, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
                try fd.readAll(limit: 4 << 20)
            }
        }
        let report = RejectionReport.Salvage.read(bytes)
        try journal.appendOnce(.purged(.init(id: text, drop: report.drop ?? "", reason: report.reason ?? "", size: report.size,
                                             purgeReason: note, by: analyst)),
                               unless: ["purged"])
        CrashPoint.purgeJournalled.reach()
        try purging.removeTree(id)
        try purging.sync()
    }

    private func openIfPresent(_ name: [UInt8]) throws(SystemError) -> FileDescriptor? {
        do {
            return try layout.state.openDirectory(name)
        } catch where error.errno == .noEntry {
            return nil
        }
    }

    private func openMaking(_ name: [UInt8]) throws(SystemError) -> FileDescriptor {
        do {
            try layout.state.makeDirectory(name, mode: 0o700)
        } catch where error.errno == .exists {}
        return try layout.state.openDirectory(name)
    }
}
