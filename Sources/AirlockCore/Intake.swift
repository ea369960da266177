import AirlockFormats
import AirlockPolicy
import AirlockSystem
import AirlockText
import Dispatch
import Foundation
import Synchronization

/// The supervisor's side of ingest: claim, identify, hand the drop to a decoder
/// child, audit what it wrote, then commit to the outbox or quarantine the
/// original with a report. It never parses a drop beyond its first bytes.
///
/// Its state is fixed at creation, so one Intake serves several worker threads
/// at once: each drop has its own id, claim and staging directory, and the
/// directories are shared descriptors.
public final class Intake: Sendable {
    let layout: RootLayout
    let configuration: Configuration
    let decoderDirectory: String
    let children: DecoderChildren?
    let log: Log
    let journal: Journal
    /// Producers' receipts (receipts.enabled), written off the workers' path.
    public let receipts: Receipts
    /// Show progress of large drops on standard error (one-shot runs on a terminal).
    public let showsProgress: Bool
    /// How directories reach the outbox and the quarantine on this filesystem.
    public let commitMode: CommitMode
    /// The instance of a fleet this intake works for (nil: a single daemon): its
    /// claims are checked to be its own just before each decision is committed.
    public let instance: InstanceLock?

    /// - Parameter children: where a long-running daemon tracks decoder children to
    ///   kill when it stops; nil for one-shot commands.
    /// - Parameter decoderDirectory: where `airlock-decoder` and `airlock-keyed-decoder` are.
    /// - Parameter commitMode: nil: probed in the layout's staging directory.
    public init(layout: RootLayout, configuration: Configuration, decoderDirectory: String, log: Log,
                children: DecoderChildren? = nil, showsProgress: Bool = false, commitMode: CommitMode? = nil,
                instance: InstanceLock? = nil) {
        self.showsProgress = showsProgress
        self.commitMode = commitMode ?? CommitMode.probe(in: layout.staging)
        self.instance = instance
        self.layout = layout
        self.configuration = configuration
        self.decoderDirectory = decoderDirectory
        self.children = children
        self.log = log
        var journal = Journal(layout, configuration)
        journal.fence = instance
        self.journal = journal
        self.receipts = Receipts(root: layout.root, settings: configuration.receipts, log: log)
    }

    /// Whether the inbox holds anything to claim now (false when it cannot be read:
    /// processing it then says why).
    public func inboxHasDrops() -> Bool {
        guard let inbox = try? layout.openInbox() else { return false }
        return inbox.closeAfter { inbox in
            (try? inbox.entryNames().contains { !Intake.isTemporaryName($0, configuration) }) ?? false
        }
    }

    /// Starts the archive decoder's template ahead of the first drop (most drops
    /// are archives), without waiting for it to load.
    public func prestartArchiveTemplate() {
        guard let children else { return }
        let format = DropFormat.archive(.zip)
        children.templates.prestart(decoder(for: format).executable,
                                    startUp: DecoderProcess.startUpArguments(format.decoderRequest(configuration, mode: .decode)),
                                    environment: DecoderProcess.childEnvironment())
    }

    func decoder(for format: DropFormat) -> DecoderProcess {
        DecoderProcess(for: format, in: decoderDirectory, timeoutSeconds: configuration.decoderTimeoutSeconds, children: children)
    }

    var policy: Policy { configuration.policy }

    /// Names producers are still writing: those `watch.ignore` or `watch.ignore_also` matches.
    public static func isTemporaryName(_ name: [UInt8], _ configuration: Configuration) -> Bool {
        TemporaryNames.matches(name, configuration.watch.ignorePatterns)
    }

    // MARK: The inbox

    /// Processes every drop now in the inbox, in name order.
    /// Processes every drop now in the inbox: claims them in name order, then
    /// decodes them `workers` at a time. `emit` is called once per drop, from one
    /// thread at a time.
    public func processInbox(workers: Int = 1, _ emit: @escaping @Sendable (DropOutcome) -> Void) throws(SystemError) {
        guard let inbox = try layout.openInbox() else {
            throw SystemError("open", Array("inbox".utf8), .noEntry)
        }
        let tickets = try inbox.closeAfter { (inbox) throws(SystemError) -> [ClaimTicket] in
            let names = try inbox.entryNames().filter { !Intake.isTemporaryName($0, configuration) }
            var tickets: [ClaimTicket] = []
            let stuck = StuckEntries(journal: journal)
            for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                // A legacy SFTP rename caught between its link and its unlink is left for the next run.
                if let status = try? inbox.status(of: name),
                   LinkedRename.inProgress(name, status, in: inbox, isTemporary: { Intake.isTemporaryName($0, configuration) }) { continue }
                if case .claimed(let ticket) = try claimOrReport(name, from: inbox, stuck: stuck) { tickets.append(ticket) }
            }
            return tickets
        }
        process(tickets, workers: workers, emit)
    }

    /// Decodes claimed drops `workers` at a time, on the pool the daemon uses
    /// too; `emit` is serialised. Returns once every drop has been processed.
    public func process(_ tickets: [ClaimTicket], workers: Int, _ emit: @escaping @Sendable (DropOutcome) -> Void) {
        guard workers > 1, tickets.count > 1 else {
            tickets.forEach { emit(process($0)) }
            return
        }
        let pool = WorkerPool(self, reported: emit)
        guard pool.start(min(workers, tickets.count)) > 0 else {
            // No worker thread could be started (a host out of tasks): this thread
            // decodes them, each drop deferred if its child cannot be started either.
            log.warning("no decoder worker thread could be started; the drops are processed one at a time")
            tickets.forEach { emit(process($0)) }
            return
        }
        pool.enqueue(tickets)
        pool.finish()
    }

    /// Moves `name` out of `inbox` into a new claim; nil when it vanished first.
    /// The inbox is a parameter because a watcher re-opens it when it is replaced.
    public func claim(_ name: [UInt8], from inbox: FileDescriptor) throws(SystemError) -> ClaimTicket? {
        try Claim.take(name, from: inbox, into: layout.claimed, instance: layout.instance)
    }

    // MARK: One drop

    /// Decides one claimed drop and carries the verdict out: outbox, quarantine,
    /// or (deferred) the claim is left for a retry.
    public func process(_ ticket: ClaimTicket) -> DropOutcome {
        let claim: Claim
        do {
            claim = try Claim.open(ticket, in: layout.claimed)
        } catch {
            return DropOutcome(id: ticket.id, dropName: ticket.dropName, verdict: .deferred(detail: "cannot open the claim: \(error)"))
        }
        defer { claim.directory.close() }
        return process(claim)
    }

    private func process(_ claim: Claim) -> DropOutcome {
        // A claim retried after its last step failed was decided already: finish it.
        do {
            if let settled = try settle(claim) {
                receipts.issue(settled)
                return settled
            }
        } catch {
            return DropOutcome(id: claim.id, dropName: claim.dropName, verdict: .deferred(detail: "cannot finish the claim: \(error)"))
        }
        let started = monotonicNanoseconds()
        var context = ReportContext(received: timestamp())
        let verdict = QuotaKeys.annotate(decide(claim, &context))
        var outcome = DropOutcome(id: claim.id, dropName: claim.dropName, verdict: verdict, size: context.size,
                                  seconds: Double(monotonicNanoseconds() - started) / 1e9)
        outcome.sha256 = context.sha256
        outcome.uploader = context.uploader
        var carried = carryOut(outcome, claim, context)
        carried.sha256 = context.sha256
        carried.uploader = context.uploader
        if case .deferred = carried.verdict {
            journalAppend(record(carried, context))
        }
        receipts.issue(carried)
        return carried
    }

    /// Appends to the audit journal; a journal that cannot be written is logged,
    /// never a reason to stop the intake.
    func journalAppend(_ record: JournalRecord) {
        // A fenced instance writes nothing more: the instance that took it over
        // records what becomes of its drops.
        if instance?.fenced() != nil { return }
        do {
            try journal.append(record)
        } catch {
            JournalWriteErrors.increment()
            log.warning("cannot append to the journal: \(error)")
        }
    }

    private func journalClaimed(_ claim: Claim, _ context: ReportContext) {
        let drop = JournalRecord.Drop(id: claim.id, drop: EscapedName(claim.dropName).text, size: context.size, sha256: context.sha256)
        journalAppend(.claimed(.init(drop: drop, uploaderUID: context.uploader?.uid, uploader: context.uploader?.name)))
    }

    struct ReportContext {
        var received: String
        var size: Int64?
        var sha256: String?
        var uploader: Uploader?
        /// Each file's detected type, when the decoder named them.
        var types: [(entry: String, type: String)]?
        /// The files with content classes, as the decoder gave them.
        var classes: [ClassifiedEntry]?
        /// The decoder child's peak resident set size, when one ran.
        var decoderMaxRSSKiB: Int64?
    }

    /// A claimed drop opened for reading, or the verdict that ended it first.
    private enum OpenedDrop {
        /// The descriptor, and the inode the name had before it was opened.
        case drop(FileDescriptor, inode: UInt64)
        case ended(DropOutcome.Verdict)
    }

    /// The claimed drop, opened once it is known to be one regular file, or the
    /// verdict that ends it before anything reads it.
    private func openDrop(_ claim: Claim, _ context: inout ReportContext) -> OpenedDrop {
        let before: FileStatus
        do {
            before = try claim.directory.status(of: Claim.dropFile)
        } catch {
            return .ended(.deferred(detail: "\(error)"))
        }
        context.uploader = Uploader(uid: before.owner)
        guard before.kind == .regular, before.linkCount == 1 else {
            journalClaimed(claim, context)
            return .ended(.rejected(notRegular(before)))
        }
        do {
            return .drop(try claim.directory.open(Claim.dropFile, [.readOnly, .noFollow, .nonBlocking]), inode: before.inode)
        } catch where error.errno == .tooManyLinks {
            return .ended(.rejected(Rejection(.notRegularFile, "the drop was replaced by a symbolic link")))
        } catch where UnreadableDrop.applies(to: error) {
            context.size = before.size
            journalClaimed(claim, context)
            return .ended(.rejected(UnreadableDrop.rejection(error, before)))
        } catch {
            return .ended(error.errno.isEnvironmental ? .deferred(detail: "\(error)") : .rejected(Rejection(.notRegularFile, "\(error)")))
        }
    }

    /// Decides and, for an accepted drop, commits. Rejections are returned for the caller to quarantine.
    private func decide(_ claim: Claim, _ context: inout ReportContext) -> DropOutcome.Verdict {
        let drop: FileDescriptor, inode: UInt64
        switch openDrop(claim, &context) {
        case .drop(let opened, let named): (drop, inode) = (opened, named)
        case .ended(let verdict): return verdict
        }
        defer { drop.close() }
        do {
            let opened = try drop.status()
            guard opened.kind == .regular, opened.linkCount == 1, opened.inode == inode else {
                journalClaimed(claim, context)
                return .rejected(notRegular(opened))
            }
            context.size = opened.size
            if let change = claim.change(since: opened) { journalClaimed(claim, context); return .rejected(change) }
            // Size first (the policy's limit, or the keyed one once the first bytes
            // name the format): nothing reads a drop whose size already rejects it.
            let identified = try Intake.identify(drop, size: opened.size, configuration: configuration)
            if case .failure(let rejection) = identified, rejection.reason == .dropTooLarge {
                journalClaimed(claim, context)
                return .rejected(rejection)
            }
            // The hash (for the journal and reports) is computed beside the decoder,
            // on the other core, rather than before it: it reads the whole drop.
            let snapshot = context
            let hashing = HashJob(drop: drop, limit: policy.maxDropBytes) { [self] sha256 in
                var claimed = snapshot
                claimed.sha256 = sha256
                journalClaimed(claim, claimed)
            }
            // The drop's `claimed` record goes before its terminal one, which
            // the caller appends once this returns.
            defer { context.sha256 = hashing.waitUntilDone() }
            switch identified {
            case .failure(let rejection):
                return .rejected(rejection)
            case .success(let format):
                return try decodeAndCommit(claim, drop: drop, format: format, before: opened, context: &context,
                                           awaitHash: { hashing.wait() })
            }
        } catch {
            try? layout.staging.removeTree(claim.idBytes)
            return .deferred(detail: "\(error)")
        }
    }

    private func notRegular(_ status: FileStatus) -> Rejection {
        if status.kind == .regular {
            return Rejection(.notRegularFile, "the drop has \(status.linkCount) hard links")
        }
        return Rejection(.notRegularFile, "the drop is a \(status.kind), not a regular file")
    }

    private func decodeAndCommit(_ claim: Claim, drop: FileDescriptor, format: DropFormat, before: FileStatus,
                                 context: inout ReportContext, awaitHash: () -> String?) throws(SystemError) -> DropOutcome.Verdict {
        // Room for what the decoder may write: a keyed archive at most what the render
        // quotas let through; an archive at least its own size. Short of that the
        // drop waits (deferred) rather than failing half-way.
        let written = format == .keyed
            ? policy.renderedBound(dropSize: before.size, keepsOriginal: configuration.keyed.keepOriginal) : before.size
        let needed = written + (1 << 20)
        let available = try layout.staging.availableBytes()
        guard available >= UInt64(needed) else {
            return .deferred(detail: "\(available) bytes free on the root's filesystem, \(needed) needed to decode this drop")
        }
        try layout.staging.makeDirectory(claim.idBytes, mode: 0o700)
        let staging = try layout.staging.openDirectory(claim.idBytes)
        defer { staging.close() }
        let display = showsProgress ? ProgressDisplay(name: claim.dropName) : nil
        defer { display?.finish() }
        // Large files are hashed, and synced ahead of the commit, as the child
        // closes them. Both borrow staging's descriptor: they end before it closes.
        let headStart = SyncHeadStart.forStaging(staging, configuration)
        defer { headStart?.close() }
        let early = EarlyDigests(staging: staging, policy: policy, headStart: headStart)
        defer { early.close() }
        let run = try runDecoder(format, drop: drop, staging: staging, display: display, early: early)
        // Asked before anything else waits: the last large file is still being hashed.
        if case .success(let message) = run.message, case .accepted(let accepted) = message.outcome {
            headStart?.decoderExited(wroteAtLeast: accepted.bytesWritten)
        }
        early.finish()
        context.decoderMaxRSSKiB = run.maxRSSKiB
        DecoderConfinementState.observe(run, required: configuration.decoderConfinementRequired, log: log, state: layout.state)
        let after = try drop.status()
        var verdict = DecoderVerdict.interpret(run, timeoutSeconds: configuration.decoderTimeoutSeconds)
        context.types = DetectedTypes.from(run.message)
        context.classes = DetectedClasses.from(run.message)
        if !after.isUnchanged(comparedTo: before) {
            // Whatever the decoder concluded, it concluded about bytes that are no longer the drop's.
            verdict = .rejected(Rejection(.changedDuringIngest, "the drop changed while it was decoded"))
        }
        switch verdict {
        case .rejected(var rejection):
            try layout.staging.removeTree(claim.idBytes)
            rejection.format = format.name
            return .rejected(rejection)
        case .deferred(let detail):
            try layout.staging.removeTree(claim.idBytes)
            return .deferred(detail: detail)
        case .accepted(let files, let bytes):
            return try auditAndCommit(claim, staging: staging, format: format, files: files, bytes: bytes,
                                      context: &context, early: early, awaitHash: awaitHash)
        }
    }

    /// Checks what an accepting decoder left in staging against what it reported
    /// and the content policy, then writes the manifest and commits to the outbox.
    private func auditAndCommit(_ claim: Claim, staging: FileDescriptor, format: DropFormat, files: Int64, bytes: Int64,
                                context: inout ReportContext, early: EarlyDigests,
                                awaitHash: () -> String?) throws(SystemError) -> DropOutcome.Verdict {
        let audit: StagingAudit.Totals
        do {
            audit = try StagingAudit(policy: policy, fsyncEach: configuration.sync == .fsync).audit(staging)
        } catch let failure as StagingAudit.Failure {
            try layout.staging.removeTree(claim.idBytes)
            return .rejected(Rejection(.decoderFailed, "the decoder left something it must not: \(failure.detail)"))
        } catch let error as SystemError {
            try layout.staging.removeTree(claim.idBytes)
            throw error
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
        guard audit.files == files, audit.bytes == bytes else {
            try layout.staging.removeTree(claim.idBytes)
            return .rejected(Rejection(.decoderFailed,
                "the decoder reported \(files) files and \(bytes) bytes, staging holds \(audit.files) and \(audit.bytes)"))
        }
        if let stop = try judgeContent(claim, staging: staging, audit: audit, types: context.types, classes: context.classes) { return stop }
        do {
            // The manifest names the drop's hash: wait for it (computed beside the decoder).
            context.sha256 = awaitHash()
            try Manifest.write(into: staging, Manifest.Drop(id: claim.id, name: claim.dropName, format: format.name, size: context.size,
                                                            sha256: context.sha256, uploader: context.uploader, types: context.types,
                                                            classes: context.classes),
                               policy: policy, modes: configuration.outboxModes, fsyncEach: configuration.sync == .fsync,
                               early: early)
            let output = try commit(claim, staging: staging, files: audit.files, bytes: audit.bytes)
            return .accepted(output: output, files: audit.files, bytes: audit.bytes)
        } catch {
            try? layout.staging.removeTree(claim.idBytes)
            try? claim.directory.removeTree(Claim.commitFile)
            throw error
        }
    }
}
