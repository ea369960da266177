import AirlockConfiguration
import AirlockDecoders
import AirlockEvents
import AirlockFormats
import AirlockJournal
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import AirlockText
import Dispatch
import Foundation
import Synchronization

/// The supervisor's side of ingest: claim, identify, hand the drop to a decoder
/// child, audit what it wrote, then commit to the outbox or quarantine the
/// original with a report. It never parses a drop beyond its first bytes.
///
/// Each step is a type of its own: `InboxClaims` takes drops out of the inbox,
/// `DropDecision` opens, identifies, decodes, audits and commits one, and
/// `DropSettlement` carries a verdict out (outbox or quarantine, the journal's
/// terminal record, the claim's removal) and finishes claims a stop left.
///
/// Its state is fixed at creation, so one Intake serves several worker threads
/// at once: each drop has its own id, claim and staging directory, and the
/// directories are shared descriptors.
public final class Intake: Sendable {
    let layout: RootLayout
    let configuration: Configuration
    let log: Log
    let journal: Journal
    let claims: InboxClaims
    let decision: DropDecision
    let settlement: DropSettlement
    /// Producers' receipts (receipts.enabled), written off the workers' path.
    public let receipts: Receipts
    /// Show progress of large drops on standard error (one-shot runs on a terminal).
    public let showsProgress: Bool
    /// Drops deciding at once: `watch.workers`, however many workers wait on syncs.
    public let decodeSlots: DecodeSlots

    /// - Parameter children: where a long-running daemon tracks decoder children to
    ///   kill when it stops; nil for one-shot commands.
    /// - Parameter decoderDirectory: where `airlock-decoder` and `airlock-keyed-decoder` are.
    /// - Parameter decodeSlots: the slots of the intake this one replaces (a reload), whose drops hold them still.
    /// - Parameter commitMode: how commits move directories (see CommitMode); nil: probed
    ///   in the layout's staging directory.
    /// - Parameter instance: the instance of a fleet this intake works for; nil for a
    ///   single daemon. Its claims are checked to be its own, and its generation
    ///   unchanged, just before each decision is committed (and its journal written).
    public init(layout: RootLayout, configuration: Configuration, decoderDirectory: String, log: Log,
                children: RunningDecoders? = nil, showsProgress: Bool = false, decodeSlots: DecodeSlots? = nil,
                commitMode: CommitMode? = nil, instance: InstanceLock? = nil) {
        self.showsProgress = showsProgress
        self.decodeSlots = decodeSlots ?? DecodeSlots(max(1, configuration.workerCount))
        self.layout = layout
        self.configuration = configuration
        self.log = log
        var journal = Journal(layout, configuration)
        journal.fence = instance
        self.journal = journal
        self.receipts = Receipts(root: layout.root, settings: configuration.receipts, log: log)
        claims = InboxClaims(layout: layout, log: log, journal: journal)
        settlement = DropSettlement(layout: layout, configuration: configuration, log: log, journal: journal,
                                    commitMode: commitMode ?? CommitMode.probe(in: layout.staging), instance: instance)
        decision = DropDecision(layout: layout, configuration: configuration, decoderDirectory: decoderDirectory,
                                children: children, log: log, journal: journal, showsProgress: showsProgress,
                                settlement: settlement)
    }

    /// Whether the inbox holds anything to claim now (false when it cannot be read:
    /// processing it then says why).
    public static func inboxHasDrops(_ layout: RootLayout, _ configuration: Configuration) -> Bool {
        guard let inbox = try? layout.openInbox() else { return false }
        return inbox.closeAfter { inbox in
            (try? inbox.entryNames().contains { !Intake.isTemporaryName($0, configuration) }) ?? false
        }
    }

    /// Starts the archive decoder's template ahead of the first drop (most drops
    /// are archives), without waiting for it to load.
    public static func prestartArchiveTemplate(_ children: RunningDecoders, configuration: Configuration, decoderDirectory: String) {
        DropDecision.prestartArchiveTemplate(children, configuration: configuration, decoderDirectory: decoderDirectory)
    }

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
                if case .claimed(let ticket) = try claims.claimOrReport(name, from: inbox, stuck: stuck) { tickets.append(ticket) }
            }
            return tickets
        }
        process(tickets, workers: workers, emit)
    }

    /// Decodes claimed drops `workers` at a time, on the pool the daemon uses
    /// too, with `Configuration.workerThreads` threads; `emit` is serialised.
    /// Returns once every drop has been processed.
    public func process(_ tickets: [ClaimTicket], workers: Int, _ emit: @escaping @Sendable (DropOutcome) -> Void) {
        guard workers > 1, tickets.count > 1 else {
            tickets.forEach { emit(process($0)) }
            return
        }
        let pool = WorkerPool(self, reported: emit)
        guard pool.start(min(Configuration.workerThreads(decoding: workers), tickets.count)) > 0 else {
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
        try claims.claim(name, from: inbox)
    }

    /// Claims `name` out of `inbox`; an entry that cannot be moved is reported the
    /// first time (log, `skipped` event on standard output, journal) and left.
    ///
    /// - Throws: what the claim throws for any other reason (the machine's faults).
    public func claimOrReport(_ name: [UInt8], from inbox: FileDescriptor, stuck: StuckEntries) throws(SystemError) -> ClaimAttempt {
        try claims.claimOrReport(name, from: inbox, stuck: stuck)
    }

    /// Crash recovery: staging is wiped; operator actions a stop interrupted are
    /// finished; each claim is settled if it was decided, or handed to `reprocess`.
    public func recover(reprocess: (ClaimTicket) -> Void) throws(SystemError) {
        try settlement.recover(reprocess: reprocess)
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
        let ownedClaim = OwnedDescriptor(claim.directory)
        return withExtendedLifetime(ownedClaim) { process(claim) }
    }

    private func process(_ claim: Claim) -> DropOutcome {
        // A claim retried after its last step failed was decided already: finish it.
        do {
            if let settled = try settlement.settle(claim) {
                receipts.issue(settled)
                return settled
            }
        } catch {
            return DropOutcome(id: claim.id, dropName: claim.dropName, verdict: .deferred(detail: "cannot finish the claim: \(error)"))
        }
        let started = monotonicNanoseconds()
        var context = ReportContext(drop: DropIdentity(id: claim.id, name: claim.dropName))
        // Given back once the verdict is known, or before the commit's syncs (see DecodeSlots).
        let slot = decodeSlots.take()
        let verdict = QuotaKeys.annotate(decision.decide(claim, &context, slot))
        slot.release()
        let outcome = DropOutcome(context.drop, verdict: verdict, seconds: Double(monotonicNanoseconds() - started) / 1e9)
        let carried = settlement.carryOut(outcome, claim, context)
        if case .deferred = carried.verdict {
            journal.appendLogging(settlement.record(carried, context), log)
        }
        receipts.issue(carried)
        return carried
    }
}

/// What is known of one drop as it is decided, for its journal records and its report.
struct ReportContext {
    /// The drop, its size, hash and uploader filled in as they become known.
    var drop: DropIdentity
    /// Each file's detected type, when the decoder named them.
    var types: [(entry: String, type: String)]?
    /// The files with content classes, as the decoder gave them.
    var classes: [ClassifiedEntry]?
    /// The decoder child's peak resident set size, when one ran.
    var decoderMaxRSSKiB: Int64?
}

extension Journal {
    /// Appends to the audit journal; a journal that cannot be written is logged,
    /// never a reason to stop the intake.
    func appendLogging(_ record: JournalRecord, _ log: Log) {
        do {
            try append(record)
        } catch {
            JournalWriteErrors.increment()
            log.warning("cannot append to the journal: \(error)")
        }
    }
}
