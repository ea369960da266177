import AirlockConfiguration
import AirlockEvents
import AirlockJournal
import AirlockPolicy
import AirlockQuarantine
import AirlockRoot
import AirlockSystem
import AirlockText
import Foundation

// How a claimed drop reaches its outcome so that a stop at any instant (SIGKILL,
// power cut) still leaves exactly one terminal record, `accepted` or `rejected`,
// in the journal, and recovery neither repeats one nor invents one.
//
// The rule for both paths: the claim directory, state/claimed/ID, is the only
// thing recovery works from, so it stays until the terminal record is durable.
// A drop is *decided* once the claim holds durable evidence of its outcome
// (report.json, or a commit file whose staging inode is in the outbox); from then
// on the outcome is never reconsidered, only finished. The record is appended
// after the decision and before the claim goes; recovery appends it only if the
// journal has no terminal record for the id (one look and append under the
// journal's lock), and an undecided claim is decoded again without any record.
//
//   accepted path                  on disk                              recovery
//   C  claimed                     claimed/ID/{name,drop}               decode again
//   A1 committing                  + commit (staging dev/inode/totals)  inode not in outbox, no record:
//                                                                       drop commit, decode again
//   A2 committed (outbox rename)   + outbox/NAME is that inode          append `accepted`, remove claim
//   A3 journalled                  + `accepted` in the journal          remove claim (no record)
//   A4 claim half removed          drop gone; commit or name may remain remove claim (no record)
//   -- done                        outbox/NAME, no claim                nothing
//
//   rejected path                  on disk                              recovery
//   C  claimed                     claimed/ID/{name,drop}               decode again
//   R1 reported                    + report.json (tmp, fsync, rename)   append `rejected`, move to quarantine
//   R2 journalled                  + `rejected` in the journal          move to quarantine (no record)
//   -- done                        quarantine/ID/{drop,report.json}     nothing
//
// The journal's `claimed` record is no step of either path: recovery never reads
// it, so it need not be durable before decoding starts (see Journal.append).
//
// A claim with no drop is one whose drop never moved in (the producer took it
// back) or whose removal had begun after A3: it is removed without a record.
// The same settling runs when the daemon retries a claim whose last step failed,
// so a retried claim is finished, not judged a second time.
//
// A3 is told by the journal, not the outbox, so a consumer may take the entry
// once it is journalled. Left open: a consumer that removes outbox/NAME in the
// milliseconds between the rename and the record makes recovery see A1 and
// decode the drop a second time.

/// Carries a decided drop through the tables above, and finishes after a stop
/// whatever the tables say is left: `Intake` runs it after `DropDecision`.
struct DropSettlement: Sendable {
    let layout: RootLayout
    let configuration: Configuration
    let log: Log
    let journal: Journal
    /// How directories reach the outbox and the quarantine on this filesystem.
    let commitMode: CommitMode
    /// The instance of a fleet this intake works for (nil: a single daemon): its
    /// claims are checked to be its own just before each decision is committed.
    let instance: InstanceLock?

    var policy: Policy { configuration.policy }

    /// The records that end a drop.
    static let terminalEvents: Set<String> = ["accepted", "rejected"]

    /// Crash recovery: staging is wiped; operator actions a stop interrupted are
    /// finished; each claim is settled if it was decided, or handed to `reprocess`.
    func recover(reprocess: (ClaimTicket) -> Void) throws(SystemError) {
        for name in try layout.staging.entryNames() {
            try layout.staging.removeTree(name)
        }
        try QuarantineDesk(layout: layout, journal: journal).recover()
        for id in try layout.claimed.entryNames().sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            try recoverClaim(id, reprocess: reprocess)
        }
    }

    /// Recovers one claim of `layout.claimed` as a start does: removed when it has no
    /// drop, finished when it was decided, else handed to `reprocess`.
    func recoverClaim(_ id: [UInt8], reprocess: (ClaimTicket) -> Void) throws(SystemError) {
        let claim = try Claim.reopen(id: id, in: layout.claimed)
        let ownedClaim = OwnedDescriptor(claim.directory)
        defer { withExtendedLifetime(ownedClaim) {} }
        guard claim.has(Claim.dropFile) else {
            try layout.claimed.removeTree(id)
            return
        }
        do {
            if let outcome = try settle(claim) {
                log.info("recovering claim \(claim.id): it was decided before the stop: \(outcome.logLine)")
                return
            }
        } catch {
            // Retried by the worker that takes the ticket, which settles it again.
            log.warning("recovering claim \(claim.id): cannot finish it yet: \(error)")
        }
        log.info("recovering claim \(claim.id): processing \(EscapedName(claim.dropName)) again")
        reprocess(claim.ticket)
    }

    /// Finishes a decided claim (R1, R2, A2, A3 above) and says how it ended; nil
    /// for an undecided one, which is left ready to be decoded again.
    func settle(_ claim: Claim) throws(SystemError) -> DropOutcome? {
        if claim.has(Claim.reportFile) {
            let report = readReport(claim)
            let drop = JournalRecord.Drop(id: claim.id, drop: report.drop ?? EscapedName(claim.dropName).text,
                                          size: report.size, sha256: report.sha256)
            try journal.appendOnce(.rejected(.init(drop: drop, reason: report.reason ?? "", entry: report.entry,
                                                   bytesWritten: report.bytesWritten ?? 0, measures: .init(recovered: true))),
                                   unless: DropSettlement.terminalEvents)
            CrashPoint.settledJournalled.reach()
            try finishQuarantine(claim)
            return DropOutcome(id: claim.id, dropName: claim.dropName, verdict: .rejected(Rejection(recovered: report)))
        }
        guard claim.has(Claim.commitFile) else { return nil }
        let commit = try CommitNote.read(claim)
        let output = try commit.flatMap { (note) throws(SystemError) in try committedOutput(note, id: claim.id) }
        let journalled = try journal.record(id: claim.id, events: DropSettlement.terminalEvents) != nil
        guard journalled || output != nil else {
            try claim.directory.removeTree(Claim.commitFile)
            return nil
        }
        if let output {
            let counted = commit?.files != nil && commit?.bytes != nil
            try journal.appendOnce(.accepted(.init(drop: .init(id: claim.id, drop: EscapedName(claim.dropName).text),
                                                   output: "outbox/" + EscapedName(output).text,
                                                   files: counted ? commit?.files : nil, bytes: counted ? commit?.bytes : nil,
                                                   measures: .init(recovered: true))),
                                   unless: DropSettlement.terminalEvents)
            CrashPoint.settledJournalled.reach()
        }
        try release(claim)
        // A consumer may have taken the entry already; the id then stands for its name.
        return DropOutcome(id: claim.id, dropName: claim.dropName,
                           verdict: .accepted(output: output ?? claim.idBytes, files: commit?.files ?? 0, bytes: commit?.bytes ?? 0))
    }

    /// Takes a decided drop through the rest of its protocol (the tables above):
    /// its terminal record is durable before its claim goes. A step that fails
    /// leaves the claim for a retry, which settles it rather than judging it again.
    func carryOut(_ outcome: DropOutcome, _ claim: Claim, _ context: ReportContext) -> DropOutcome {
        func deferred(_ detail: String) -> DropOutcome {
            DropOutcome(outcome.drop, verdict: .deferred(detail: detail), seconds: outcome.seconds)
        }
        switch outcome.verdict {
        case .deferred:
            return outcome
        case .rejected(let rejection):
            do {
                try checkStillOurs(claim)
                try writeReport(claim, rejection, context)
                CrashPoint.rejectedReported.reach()
                try journal.append(record(outcome, context))
                CrashPoint.rejectedJournalled.reach()
                try finishQuarantine(claim)
            } catch {
                return deferred("cannot quarantine: \(error)")
            }
        case .accepted:
            CrashPoint.acceptedRenamed.reach()
            do {
                try checkStillOurs(claim)
                try journal.append(record(outcome, context))
            } catch {
                return deferred("committed, but its journal record cannot be written: \(error)")
            }
            CrashPoint.acceptedJournalled.reach()
            do {
                try release(claim)
            } catch {
                log.warning("cannot remove the claim of \(claim.id) after its commit: \(error); the next start does")
            }
        }
        return outcome
    }

    /// A verdict's journal record.
    func record(_ outcome: DropOutcome, _ context: ReportContext) -> JournalRecord {
        let drop = JournalRecord.Drop(context.drop)
        let measures = JournalRecord.Measures(durationMilliseconds: Int64(outcome.seconds * 1000), decoderMaxRSSKiB: context.decoderMaxRSSKiB)
        switch outcome.verdict {
        case .accepted(let output, let files, let bytes):
            return .accepted(.init(drop: drop, output: "outbox/" + EscapedName(output).text, files: files, bytes: bytes,
                                   types: context.types?.map { DetectedType(entry: $0.entry, type: $0.type) }, measures: measures))
        case .rejected(let rejection):
            return .rejected(.init(drop: drop, reason: rejection.reason.rawValue, entry: rejection.entry,
                                   bytesWritten: rejection.bytesWritten, measures: measures))
        case .deferred(let detail):
            return .deferred(.init(drop: drop, detail: detail, measures: measures))
        }
    }

    private func readReport(_ claim: Claim) -> RejectionReport.Salvage {
        let bytes = try? claim.directory.open(Claim.reportFile, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
            try fd.readAll(limit: 4 << 20)
        }
        return RejectionReport.Salvage.read(bytes)
    }

    /// The outbox entry that is the staging directory a commit note names, if the
    /// rename happened.
    private func committedOutput(_ note: CommitNote, id: String) throws(SystemError) -> [UInt8]? {
        for name in try layout.outbox.entryNames() {
            // In a fleet the note may come from another host's mount of the root,
            // whose device number is its own (each FUSE or network mount has one):
            // there the inode alone names the directory, and the manifest decides.
            guard let status = try? layout.outbox.status(of: name), status.inode == note.inode,
                  layout.instance != nil || status.device == note.device else { continue }
            // In a fleet another instance commits while this one settles, and a
            // staging directory removed in a take-over may have given its inode to
            // that commit: the entry is this drop's only if its manifest says so.
            guard layout.instance == nil || manifestNames(id, in: name) else { continue }
            return name
        }
        return nil
    }

    /// Whether outbox/NAME's manifest names the drop `id`.
    private func manifestNames(_ id: String, in name: [UInt8]) -> Bool {
        guard let bytes = try? layout.outbox.openDirectory(name).closeAfter({ (entry) throws(SystemError) in
            try entry.open(Manifest.name, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in try fd.readAll(limit: 1 << 20) }
        }) else { return false }
        return String(decoding: bytes, as: UTF8.self).contains("\"id\":\(JSONObjectWriter.quote(id)),")
    }

    /// A1 → A2: makes staging and a note of its inode (and totals) in the claim
    /// durable, then renames it to a free outbox name with RENAME_NOREPLACE (or
    /// where the filesystem refuses the flag, a plain rename of the never-empty
    /// directory: see CommitMode), so an existing entry is never replaced.
    func commit(_ claim: Claim, staging: FileDescriptor, files: Int64, bytes: Int64) throws(SystemError) -> [UInt8] {
        let identity = try staging.status()
        let note = CommitNote(device: identity.device, inode: identity.inode, files: files, bytes: bytes)
        let claimDevice = try claim.directory.status().device
        if configuration.sync == .syncfs && claimDevice == identity.device {
            // The syncfs that staging needs anyway covers the note and its name
            // too when they are on staging's filesystem: both are written before
            // it starts. A note torn by a stop before it reads as no note (A1).
            try note.write(claim, sync: false)
            try SyncGroup.shared.sync(staging)
        } else {
            if configuration.sync == .syncfs { try SyncGroup.shared.sync(staging) }
            try note.write(claim, sync: true)
        }
        let base = OutboxName.base(for: claim.dropName, id: claim.id, policy: policy)
        var committed: [UInt8]?
        try checkStillOurs(claim)
        for candidate in OutboxName.candidates(base: base) {
            do {
                try commitMode.move(claim.idBytes, in: layout.staging, to: layout.outbox, candidate)
                committed = candidate
                break
            } catch where error.errno == .exists {
                continue
            }
        }
        if committed == nil {
            try commitMode.move(claim.idBytes, in: layout.staging, to: layout.outbox, claim.idBytes)
            committed = claim.idBytes
        }
        do {
            if configuration.sync == .syncfs {
                // A syncfs makes the rename durable as an fsync of the outbox
                // would: a rename never leaves its filesystem, which is
                // staging's. Through the same group as the syncs other drops
                // wait for before their renames, one sync serves both, and a
                // drop costs the disk one journal commit fewer.
                try SyncGroup.shared.sync(layout.outbox)
            } else {
                try DirectorySyncs.shared.sync(layout.outbox)
            }
        } catch {
            // The rename happened: failing now would retry the drop and commit it twice.
            log.warning("sync of the outbox after committing \(claim.id): \(error)")
        }
        return committed!
    }

    /// In a fleet: throws ESTALE unless the claim is still this instance's and the
    /// instance has not been taken over (see InstanceLock.check).
    func checkStillOurs(_ claim: Claim) throws(SystemError) {
        try instance?.check(claim.idBytes, directory: claim.directory, in: layout.claimed)
    }

    /// A3 → done: removes the claim of a committed drop, its drop first, so a
    /// claim without a drop is always one recovery may simply remove.
    ///
    /// The removal is not fsynced: a stop that loses it brings the claim back
    /// at A3 (or A4), whose `accepted` record is durable already, and recovery
    /// removes it again without a record. What that needs is the record still in
    /// the journal when the claim comes back; the journal fsyncs `claimed/`
    /// before each rotation (see Journal.rotate), so no removal is still pending
    /// by the time a rotation could carry its record away.
    func release(_ claim: Claim) throws(SystemError) {
        try claim.directory.removeTree(Claim.dropFile)
        CrashPoint.claimHalfRemoved.reach()
        for file in [Claim.nameFile, Claim.reportTemporary, Claim.commitFile] {
            try claim.directory.removeTree(file)
        }
        try layout.claimed.removeDirectory(claim.idBytes)
    }

    /// C → R1: writes report.json into the claim (temporary file, fsync, rename,
    /// fsync of the claim), which decides the drop as rejected.
    func writeReport(_ claim: Claim, _ rejection: Rejection, _ context: ReportContext) throws(SystemError) {
        let report = RejectionReport(context.drop, rejection, policy: policy, types: context.types)
        let bytes: [UInt8]
        do {
            bytes = Array(try report.encoded())
        } catch {
            preconditionFailure("a report always encodes: \(error)")
        }
        try claim.directory.replaceAtomically(Claim.reportFile, with: bytes, temporary: Claim.reportTemporary, .init(mode: 0o600))
    }

    /// R2 → done: renames the whole claim to quarantine/ID, so the entry appears
    /// complete or not at all.
    func finishQuarantine(_ claim: Claim) throws(SystemError) {
        try claim.directory.removeTree(Claim.nameFile)
        try claim.directory.removeTree(Claim.commitFile)
        try claim.directory.removeTree(Claim.reportTemporary)
        try claim.directory.sync()
        try checkStillOurs(claim)
        try commitMode.move(claim.idBytes, in: layout.claimed, to: layout.quarantine, claim.idBytes)
        try DirectorySyncs.shared.sync(layout.quarantine)
        try DirectorySyncs.shared.sync(layout.claimed)
    }
}

/// claimed/ID/commit: the staging directory's identity, durable before the
/// outbox rename, and the totals its `accepted` record carries.
/// Older notes have the identity alone.
struct CommitNote {
    let device: UInt64
    let inode: UInt64
    var files: Int64?
    var bytes: Int64?

    /// Writes the note; with `sync`, fsyncs it and the claim directory, else the
    /// caller makes both durable (a syncfs of their filesystem) before the rename.
    func write(_ claim: Claim, sync: Bool) throws(SystemError) {
        let text = "\(device) \(inode) \(files.map(String.init) ?? "-") \(bytes.map(String.init) ?? "-")\n"
        try claim.directory.open(Claim.commitFile, [.writeOnly, .create, .truncate, .noFollow], mode: 0o600).closeAfter { (fd) throws(SystemError) in
            try fd.writeAll(Array(text.utf8))
            if sync { try fd.sync() }
        }
        if sync { try claim.directory.sync() }
    }

    /// The claim's note; nil when it is unreadable (a stop tore it before its fsync).
    static func read(_ claim: Claim) throws(SystemError) -> CommitNote? {
        let text = try claim.directory.open(Claim.commitFile, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
            try fd.readAll(limit: 256)
        }
        let fields = String(decoding: text, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2 || fields.count == 4, let device = UInt64(fields[0]), let inode = UInt64(fields[1]) else { return nil }
        var note = CommitNote(device: device, inode: inode)
        if fields.count == 4 {
            note.files = Int64(fields[2])
            note.bytes = Int64(fields[3])
        }
        return note
    }
}
