import AirlockConfiguration
import AirlockDecoders
import AirlockDesk
import AirlockEvents
import AirlockIntake
import AirlockJournal
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import AirlockText
import Dispatch
import Foundation

/// `airlock run`: watches the inbox unattended. One dispatcher thread turns
/// inotify events into settled, complete names and claims them; a bounded pool of
/// worker threads each runs one drop at a time through the intake (and so one
/// decoder child). Claimed drops wait in a bounded queue; beyond it, drops simply
/// wait in the inbox, so 10,000 drops at once cost names in memory, not
/// descriptors or processes.
///
/// Only the dispatcher thread touches the daemon; the watch thread, the workers
/// and the signal handlers reach it through Sendable parts: the watch's and the
/// pool's queues, the signal flags and the wake-up pipe.
public final class Daemon {
    public struct Setup {
        public var rootPath: String
        /// The file SIGHUP re-reads (nil: defaults, nothing to reload).
        public var configurationPath: String?
        public var configuration: Configuration
        public var decoderDirectory: String
        /// The instance of a fleet this daemon is (its lock held); nil: a single daemon.
        public var instance: InstanceLock?
        /// How this instance's filesystem commits (nil: probed).
        public var commitMode: CommitMode?

        public init(rootPath: String, configurationPath: String?, configuration: Configuration, decoderDirectory: String) {
            self.rootPath = rootPath
            self.configurationPath = configurationPath
            self.configuration = configuration
            self.decoderDirectory = decoderDirectory
        }
    }

    let setup: Setup
    let layout: RootLayout
    let log = Log()
    private let events = EventStream()
    let notifier = ServiceNotifier()
    let children = RunningDecoders()
    private let metrics: Metrics
    /// Inbox entries that cannot be moved, reported once each.
    private let stuck: StuckEntries
    private var nextMetrics: UInt64 = 0
    var runLock: RunLock?

    var configuration: Configuration
    let pool: WorkerPool<Intake>

    // Stop and reload, asked for by signals.
    private let signals = SignalRequests()

    // The dispatcher's own state.
    var inbox: InboxTracker
    var backlog: [ClaimTicket] = []
    // An instance of a fleet: when it polls next (see poll); why it was taken over (it
    // then exits 75); the names written in place that listings leave alone (see noteWrittenInPlace).
    var nextPoll: UInt64 = 0
    var fencedDetail: String?
    var unreadableRecordPolls = 0
    var writtenInPlace = Set<[UInt8]>()
    private var retries = RetryScheduler()
    /// False from the moment the inbox is found gone until it is back.
    private var inboxPresent = true
    private var watch: InboxWatch!
    private var completion: CompletionCheck
    private var nextRescan: UInt64 = 0
    private var nextInboxCheck: UInt64 = 0
    private var nextWatchdog: UInt64 = 0
    var nextWorkerStart: UInt64 = 0
    var workersShort = false
    private var counts = (accepted: 0, rejected: 0, deferred: 0)
    private let wake: WakePipe

    public init(_ setup: Setup, layout: RootLayout) throws {
        self.setup = setup
        self.layout = layout
        self.configuration = setup.configuration
        self.metrics = Metrics(instance: layout.instance)
        let log = self.log
        self.completion = CompletionCheck(rule: setup.configuration.watch.completion, log: { log.warning($0) })
        self.stuck = StuckEntries(journal: Daemon.stuckJournal(layout, setup.configuration))
        self.wake = try WakePipe()
        self.inbox = InboxTracker(settle: UInt64(setup.configuration.watch.settleMilliseconds) * 1_000_000)
        let intake = Intake(layout: layout, configuration: setup.configuration,
                            decoderDirectory: setup.decoderDirectory, log: log, children: children,
                            commitMode: setup.commitMode, instance: setup.instance)
        let events = self.events
        let wake = self.wake
        self.pool = WorkerPool(intake, reported: { outcome in
            events.emit(outcome.eventLine)
            log.info(outcome.logLine)
        }, collect: { wake.wake() })
    }

    // MARK: Running

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    public func run() -> Int32 {
        // An instance of a fleet holds its own lock already (see InstanceLock).
        if setup.instance == nil, let refusal = takeRunLock() { return refusal }
        signals.install { [wake] in wake.wake() }
        do {
            watch = try InboxWatch(path: setup.rootPath + "/inbox") { [wake] in wake.wake() }
        } catch {
            log.error("\(error)")
            return 74
        }
        watch.start()
        do {
            try pool.intake.recover { backlog.append($0) }
            try pool.intake.adoptSingleDaemonClaims { backlog.append($0) }
        } catch {
            log.error("crash recovery failed: \(error)")
            return 74
        }
        let workerCount = configuration.workerCount
        startWorkers(now: monotonicNanoseconds())
        let now = monotonicNanoseconds()
        rescan(now: now, atStart: true)
        nextRescan = now + seconds(configuration.watch.rescanSeconds)
        notifier.ready()
        log.info("watching \(setup.rootPath)/inbox with \(workerCount) decoder workers")
        updateStatus()

        while !signals.stopRequested && fencedDetail == nil {
            step()
        }
        let status = shutDown()
        if let fencedDetail {
            log.error(fencedDetail)
            return 75
        }
        return status
    }

    private func step() {
        let now = monotonicNanoseconds()
        for event in watch.takeEvents() {
            switch event {
            case .name(let name, let arrival):
                noteArrival(name, arrival, now: now)
            case .overflow:
                log.warning("the inotify queue overflowed; rescanning the inbox")
                rescan(now: now)
            case .inboxGone:
                inboxWentAway(now: now)
            case .watching:
                // Whatever arrived while there was no watch.
                rescan(now: now)
            case .failed(let message):
                log.warning(message)
                inboxWentAway(now: now)
            }
        }
        if !inboxPresent && now >= nextInboxCheck { reopenInbox(now: now) }
        if now >= nextRescan {
            rescan(now: now)
            removeAbandonedUploads(now: now)
            nextRescan = now + seconds(configuration.watch.rescanSeconds)
        }
        if pool.workerCount < workerThreads && now >= nextWorkerStart { startWorkers(now: now) }
        collectFinished(now: now)
        feedQueue(now: now)
        if signals.takeReload() { reload() }
        if setup.instance != nil && now >= nextPoll { poll(now: now) }
        if !configuration.metricsPath.isEmpty && now >= nextMetrics {
            writeMetrics()
            nextMetrics = now + seconds(configuration.metricsIntervalSeconds)
        }
        if let interval = notifier.watchdogIntervalNanoseconds, now >= nextWatchdog {
            notifier.watchdog()
            nextWatchdog = now + interval
        }
        sleepUntilSomethingHappens(now: now)
    }

    private func seconds(_ value: Int64) -> UInt64 { UInt64(value) * 1_000_000_000 }

    // MARK: Names in the inbox

    /// A name an event reported. Under the `renamed` rule only a rename completes
    /// a drop: a name written in place, or created, waits for a listing.
    private func noteArrival(_ name: [UInt8], _ arrival: InboxWatch.Arrival, now: UInt64) {
        guard inboxPresent, !Intake.isTemporaryName(name, configuration) else { return }
        if arrival == .moved { writtenInPlace.remove(name) }
        if configuration.watch.completion == .renamed && arrival != .moved && !configuration.cluster.takesSettledWrites {
            if arrival == .closed { noteWrittenInPlace(name) }
            return
        }
        inbox.noteEvent(name, renamed: arrival == .moved, now: now)
    }

    private func inboxWentAway(now: UInt64) {
        guard inboxPresent else { return }
        log.warning("the inbox went away (deleted, moved or unmounted); waiting for it to come back")
        inboxPresent = false
        inbox.removeAll()
        nextInboxCheck = now + 1_000_000_000
    }

    /// The inbox for one pass. It is opened afresh each time and never held: a
    /// directory held open is not freed when deleted, and inotify then never
    /// says IN_DELETE_SELF.
    func withInbox(now: UInt64, _ body: (FileDescriptor) -> Void) {
        guard inboxPresent else { return }
        guard let directory = try? layout.openInbox() else {
            inboxWentAway(now: now)
            return
        }
        let owned = OwnedDescriptor(directory)
        body(owned.descriptor)
    }

    /// Adds every name in the inbox to the pending set.
    func rescan(now: UInt64, atStart: Bool = false) {
        pool.intake.receipts.expireIfDue()
        var listed: [[UInt8]]?
        withInbox(now: now) { directory in
            do {
                listed = try directory.entryNames()
            } catch {
                log.warning("cannot list the inbox: \(error)")
            }
        }
        guard let names = listed else { return }
        inbox.noteListed(leavingWrittenInPlace(names.filter { !Intake.isTemporaryName($0, configuration) }), now: now, atStart: atStart)
    }

    private func reopenInbox(now: UInt64) {
        nextInboxCheck = now + 1_000_000_000
        guard let fd = try? layout.openInbox() else { return }
        OwnedDescriptor(fd).close()
        inboxPresent = true
        watch.rewatch()
        log.info("the inbox is back; watching it again")
        rescan(now: now)
    }

    /// Claims due, complete names while the queue has room; moves recovered
    /// claims and due retries in first.
    private func feedQueue(now: UInt64) {
        var room = Int(configuration.watch.queueLimit) - pool.queued
        guard room > 0 else { return }
        var ready: [ClaimTicket] = []
        while room > 0, !backlog.isEmpty {
            ready.append(backlog.removeFirst())
            room -= 1
        }
        let due = retries.takeDue(now: now, limit: room)
        ready += due
        room -= due.count
        // The tracker is being walked: what `consider` needs of it is read first.
        let settle = inbox.settle
        if room > 0 { withInbox(now: now) { directory in
            inbox.visitDue(now: now, while: { room > 0 }) { name, entry in
                let decision = consider(name, &entry, in: directory, now: now, settle: settle) { ticket in
                    ready.append(ticket)
                    room -= 1
                }
                return decision
            }
        } }
        guard !ready.isEmpty else { return }
        pool.enqueue(ready)
        updateStatus()
    }

    /// Checks that nobody still writes a due name, then claims it.
    private func consider(_ name: [UInt8], _ entry: inout InboxTracker.Entry, in directory: FileDescriptor, now: UInt64,
                          settle: UInt64, claimed: (ClaimTicket) -> Void) -> InboxTracker.Decision {
        let readiness = completion.check(name, in: directory, entry: &entry) { Intake.isTemporaryName($0, configuration) }
        switch InboxTracker.step(after: readiness, entry, now: now, settle: settle, maxWait: seconds(configuration.watch.maxWaitSeconds)) {
        case .forget:
            return .done
        case .look(let time):
            return .waitUntil(time)
        case .claim(let overdue):
            if overdue { log.warning("\(EscapedName(name)) has not settled in \(configuration.watch.maxWaitSeconds) s; taking it as it is") }
        }
        do {
            switch try pool.intake.claimOrReport(name, from: directory, stuck: stuck) {
            case .claimed(let ticket):
                claimed(ticket)
            case .vanished, .stuck:
                // A stuck entry was reported once; the next full rescan tries it
                // again, quietly, in case it was changed.
                break
            }
            return .done
        } catch {
            log.warning("cannot claim \(EscapedName(name)): \(error); retrying")
            entry.lastSeen = nil
            return .waitUntil(InboxTracker.afterFailedClaim(now: now, settle: settle))
        }
    }

    private func collectFinished(now: UInt64) {
        let done = pool.takeFinished()
        guard !done.isEmpty else { return }
        for outcome in done {
            metrics.record(outcome)
            switch outcome.verdict {
            case .accepted:
                counts.accepted += 1
                retries.settled(outcome.id)
            case .rejected:
                counts.rejected += 1
                retries.settled(outcome.id)
            case .deferred:
                counts.deferred += 1
                let ticket = ClaimTicket(id: outcome.id, dropName: outcome.dropName)
                let delay = retries.deferred(ticket, now: now, maxSeconds: configuration.watch.retryMaxSeconds)
                log.info("retrying \(outcome.id) in \(delay) s")
            }
        }
        updateStatus()
    }

    // MARK: Waiting

    private func sleepUntilSomethingHappens(now: UInt64) {
        var deadline = nextRescan
        if !configuration.metricsPath.isEmpty { deadline = min(deadline, nextMetrics) }
        if let earliest = inbox.earliestDue, pool.queued < Int(configuration.watch.queueLimit) {
            deadline = min(deadline, max(earliest, now + 5_000_000))
        }
        if let retry = retries.earliestDue { deadline = min(deadline, retry) }
        if setup.instance != nil { deadline = min(deadline, nextPoll) }
        if !inboxPresent { deadline = min(deadline, nextInboxCheck) }
        if let interval = notifier.watchdogIntervalNanoseconds { deadline = min(deadline, max(nextWatchdog, now + interval / 4)) }
        let milliseconds = Int32(clamping: deadline > now ? (deadline - now) / 1_000_000 + 1 : 0)
        wake.sleep(milliseconds: milliseconds)
    }

    // MARK: Reload, shutdown

    /// Stops taking drops, lets in-flight ones finish within the grace period,
    /// then kills the decoders still running; their drops stay claimed and their
    /// staging is removed, for the next start.
    private func shutDown() -> Int32 {
        notifier.stopping()
        watch.stop()
        // Templates and children waiting for a drop get none now: killed and reaped
        // here (children the templates forked are in flight, and finish or are abandoned below).
        children.stopStarting()
        log.info("stopping: no new drops; \(pool.inFlight) in flight get \(configuration.watch.graceSeconds) s to finish")
        let abandoned = pool.stop()
        if abandoned > 0 { log.info("\(abandoned) claimed drops stay claimed for the next start") }
        let grace = Date().addingTimeInterval(TimeInterval(configuration.watch.graceSeconds))
        if !pool.waitForWorkers(until: grace) {
            log.warning("grace period over: killing \(children.count) decoders; their drops stay claimed")
            children.abandonAll()
            _ = pool.waitForWorkers(until: Date().addingTimeInterval(30))
        }
        collectFinished(now: monotonicNanoseconds())
        if !configuration.metricsPath.isEmpty { writeMetrics() }
        pool.intake.receipts.finish()
        log.info("stopped: \(counts.accepted) accepted, \(counts.rejected) rejected, \(counts.deferred) deferred")
        return 0
    }

    private func writeMetrics() {
        metrics.setQueueDepth(pool.queued + pool.inFlight + backlog.count + retries.count)
        metrics.setRoot(try? RootGauges.measure(layout, configuration))
        metrics.setPublish(PublishLag.measure(layout, configuration))
        do {
            try metrics.write(to: configuration.metricsPath, root: layout.root)
        } catch {
            log.warning("cannot write metrics to \(configuration.metricsPath): \(error)")
        }
    }

    private func updateStatus() {
        notifier.status("\(counts.accepted) accepted, \(counts.rejected) rejected, \(counts.deferred) deferred; \(pool.inFlight) in flight, \(pool.queued) queued, \(inbox.count) waiting in the inbox")
    }
}
