import AirlockCore
import AirlockPolicy
import AirlockSystem
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `airlock run`: watches the inbox unattended. One dispatcher thread turns
/// inotify events into settled, complete names and claims them; a bounded pool of
/// worker threads each runs one drop at a time through the intake (and so one
/// decoder child). Claimed drops wait in a bounded queue; beyond it, drops simply
/// wait in the inbox, so 10,000 drops at once cost names in memory, not
/// descriptors or processes.
public final class Daemon: @unchecked Sendable {
    public struct Setup {
        public var rootPath: String
        /// The file SIGHUP re-reads (nil: defaults, nothing to reload).
        public var configurationPath: String?
        public var configuration: Configuration
        public var decoderDirectory: String

        public init(rootPath: String, configurationPath: String?, configuration: Configuration, decoderDirectory: String) {
            self.rootPath = rootPath
            self.configurationPath = configurationPath
            self.configuration = configuration
            self.decoderDirectory = decoderDirectory
        }
    }

    private let setup: Setup
    private let layout: RootLayout
    private let log = Log()
    private let events = EventStream()
    private let notifier = ServiceNotifier()
    private let children = DecoderChildren()
    private let metrics = Metrics()
    /// Inbox entries that cannot be moved, reported once each.
    private let stuck: StuckEntries
    private var nextMetrics: UInt64 = 0
    private var runLock: RunLock?

    // Shared with the workers, under `state`.
    private let state = NSCondition()
    private var intake: Intake
    private var configuration: Configuration
    private var queue: [ClaimTicket] = []
    private var queueHead = 0
    private var inFlight = 0
    private var finished: [DropOutcome] = []
    private var watchEvents: [InboxWatch.Event] = []
    private var stopping = false
    private var workersRunning = 0

    // Signals, set by dispatch sources.
    private let signalLock = NSLock()
    private var termRequested = false
    private var reloadRequested = false
    private var signalSources: [DispatchSourceSignal] = []

    // The dispatcher's own state.
    private var pending: [[UInt8]: PendingName] = [:]
    /// Pending names in the order first seen (may hold names since taken; those
    /// are skipped), so claiming walks from the oldest without sorting thousands.
    private var arrivals: [[UInt8]] = []
    private var backlog: [ClaimTicket] = []
    private var retries: [Retry] = []
    private var attempts: [String: Int] = [:]
    /// False from the moment the inbox is found gone until it is back.
    private var inboxPresent = true
    private var watch: InboxWatch!
    private var completion: CompletionCheck
    private var nextRescan: UInt64 = 0
    private var nextInboxCheck: UInt64 = 0
    private var nextWatchdog: UInt64 = 0
    private var counts = (accepted: 0, rejected: 0, deferred: 0)
    private let wake: (read: FileDescriptor, write: FileDescriptor)

    private struct PendingName {
        var firstSeen: UInt64
        /// When it may be considered: the settle interval after its last event, or
        /// at once for a name that was there at start.
        var due: UInt64
        var lastSeen: FileStatus?
    }

    private struct Retry {
        var due: UInt64
        var ticket: ClaimTicket
    }

    public init(_ setup: Setup, layout: RootLayout) throws {
        self.setup = setup
        self.layout = layout
        self.configuration = setup.configuration
        let log = self.log
        self.completion = CompletionCheck(log: { log.warning($0) })
        self.stuck = StuckEntries(journal: Journal(state: layout.state, maxBytes: setup.configuration.journalMaxBytes,
                                                   keep: setup.configuration.journalKeep))
        self.wake = try makePipe()
        try wake.read.setBlocking(false)
        try wake.write.setBlocking(false)
        self.intake = Intake(layout: layout, configuration: setup.configuration,
                             decoderDirectory: setup.decoderDirectory, log: log, children: children)
    }

    // MARK: Running

    /// Runs until SIGTERM or SIGINT; returns the exit status.
    public func run() -> Int32 {
        do {
            guard let lock = try RunLock.acquire(layout, mode: "daemon") else {
                let holder = RunLock.holder(layout)
                log.error("another airlock (pid \(holder.pid.map(String.init) ?? "unknown")) is running on \(setup.rootPath)")
                return 75
            }
            runLock = lock
        } catch {
            log.error("cannot take the run lock: \(error)")
            return 74
        }
        installSignalHandlers()
        do {
            watch = try InboxWatch(path: setup.rootPath + "/inbox") { [self] event in
                state.lock()
                watchEvents.append(event)
                state.unlock()
                signalWake()
            }
        } catch {
            log.error("\(error)")
            return 74
        }
        watch.start()
        do {
            try intake.recover { backlog.append($0) }
        } catch {
            log.error("crash recovery failed: \(error)")
            return 74
        }
        let workerCount = configuration.workerCount
        for _ in 0..<workerCount { startWorker() }
        let now = monotonicNanoseconds()
        rescan(now: now, due: now)
        nextRescan = now + seconds(configuration.watch.rescanSeconds)
        notifier.ready()
        log.info("watching \(setup.rootPath)/inbox with \(workerCount) decoder workers")
        updateStatus()

        while !stopRequested() {
            step()
        }
        return shutDown()
    }

    private func step() {
        let now = monotonicNanoseconds()
        state.lock()
        let arrived = watchEvents
        watchEvents.removeAll()
        state.unlock()
        for event in arrived {
            switch event {
            case .name(let name):
                noteEvent(name, now: now)
            case .overflow:
                log.warning("the inotify queue overflowed; rescanning the inbox")
                rescan(now: now, due: now + settle)
            case .inboxGone:
                inboxWentAway(now: now)
            case .watching:
                // Whatever arrived while there was no watch.
                rescan(now: now, due: now + settle)
            case .failed(let message):
                log.warning(message)
                inboxWentAway(now: now)
            }
        }
        if !inboxPresent && now >= nextInboxCheck { reopenInbox(now: now) }
        if now >= nextRescan {
            rescan(now: now, due: now + settle)
            nextRescan = now + seconds(configuration.watch.rescanSeconds)
        }
        collectFinished(now: now)
        feedQueue(now: now)
        if reloadWanted() { reload() }
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

    private var settle: UInt64 { UInt64(configuration.watch.settleMilliseconds) * 1_000_000 }

    private func seconds(_ value: Int64) -> UInt64 { UInt64(value) * 1_000_000_000 }

    // MARK: Names in the inbox

    private func inboxWentAway(now: UInt64) {
        guard inboxPresent else { return }
        log.warning("the inbox went away (deleted, moved or unmounted); waiting for it to come back")
        inboxPresent = false
        pending.removeAll()
        arrivals.removeAll()
        nextInboxCheck = now + 1_000_000_000
    }

    /// The inbox for one pass. It is opened afresh each time and never held: a
    /// directory held open is not freed when deleted, and inotify then never
    /// says IN_DELETE_SELF.
    private func withInbox(now: UInt64, _ body: (FileDescriptor) -> Void) {
        guard inboxPresent else { return }
        guard let inbox = try? layout.openInbox() else {
            inboxWentAway(now: now)
            return
        }
        defer { inbox.close() }
        body(inbox)
    }

    private func noteEvent(_ name: [UInt8], now: UInt64) {
        guard inboxPresent, !Intake.isTemporaryName(name, configuration) else { return }
        if var entry = pending[name] {
            entry.due = now + settle
            pending[name] = entry
        } else {
            addPending(name, PendingName(firstSeen: now, due: now + settle, lastSeen: nil))
        }
    }

    private func addPending(_ name: [UInt8], _ entry: PendingName) {
        pending[name] = entry
        arrivals.append(name)
    }

    /// Adds every name in the inbox to the pending set, due at `due` at the latest.
    private func rescan(now: UInt64, due: UInt64) {
        var listed: [[UInt8]]?
        withInbox(now: now) { inbox in
            do {
                listed = try inbox.entryNames()
            } catch {
                log.warning("cannot list the inbox: \(error)")
            }
        }
        guard let names = listed else { return }
        for name in names where !Intake.isTemporaryName(name, configuration) && pending[name] == nil {
            // Found by a scan, not an event: still settle, unless it was there at start.
            addPending(name, PendingName(firstSeen: now, due: due > now ? now + settle : now, lastSeen: nil))
        }
    }

    private func reopenInbox(now: UInt64) {
        nextInboxCheck = now + 1_000_000_000
        guard let fd = try? layout.openInbox() else { return }
        fd.close()
        inboxPresent = true
        watch.rewatch()
        log.info("the inbox is back; watching it again")
        rescan(now: now, due: now + settle)
    }

    /// Claims settled, complete names while the queue has room; moves due retries
    /// and recovered claims in first.
    private func feedQueue(now: UInt64) {
        var room = Int(configuration.watch.queueLimit) - queuedCount()
        guard room > 0 else { return }
        var ready: [ClaimTicket] = []
        while room > 0, !backlog.isEmpty {
            ready.append(backlog.removeFirst())
            room -= 1
        }
        retries.sort { $0.due < $1.due }
        while room > 0, let first = retries.first, first.due <= now {
            ready.append(retries.removeFirst().ticket)
            room -= 1
        }
        if room > 0 { withInbox(now: now) { inbox in
            var index = 0
            var kept: [[UInt8]] = []
            while index < arrivals.count && room > 0 {
                let name = arrivals[index]
                index += 1
                guard var entry = pending[name] else { continue }  // taken or vanished
                guard now >= entry.due else {
                    kept.append(name)
                    continue
                }
                let readiness = completion.check(name, in: inbox, lastSeen: &entry.lastSeen)
                let overdue = now >= entry.firstSeen + seconds(configuration.watch.maxWaitSeconds)
                switch readiness {
                case .vanished:
                    pending[name] = nil
                    continue
                case .writerActive where !overdue:
                    entry.due = now + settle
                    pending[name] = entry
                    kept.append(name)
                    continue
                case .writerActive:
                    log.warning("\(EscapedName(name)) has not settled in \(configuration.watch.maxWaitSeconds) s; taking it as it is")
                case .ready, .notRegular:
                    break
                }
                pending[name] = nil
                do {
                    switch try intake.claimOrReport(name, from: inbox, stuck: stuck) {
                    case .claimed(let ticket):
                        ready.append(ticket)
                        room -= 1
                    case .vanished, .stuck:
                        // A stuck entry was reported once; the next full rescan tries it
                        // again, quietly, in case it was changed.
                        break
                    }
                } catch {
                    log.warning("cannot claim \(EscapedName(name)): \(error); retrying")
                    pending[name] = PendingName(firstSeen: entry.firstSeen, due: now + seconds(1) + settle, lastSeen: nil)
                    kept.append(name)
                }
            }
            // The names walked past and still pending stay, in their order, ahead of the rest.
            arrivals.replaceSubrange(0..<index, with: kept)
            if pending.isEmpty { arrivals.removeAll(keepingCapacity: true) }
        } }
        guard !ready.isEmpty else { return }
        state.lock()
        queue.append(contentsOf: ready)
        state.broadcast()
        state.unlock()
        updateStatus()
    }

    private func queuedCount() -> Int {
        state.lock()
        defer { state.unlock() }
        return queue.count - queueHead
    }

    // MARK: Workers

    private func startWorker() {
        state.lock()
        workersRunning += 1
        state.unlock()
        let thread = Thread { [self] in workerLoop() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func workerLoop() {
        while true {
            state.lock()
            while queueHead == queue.count && !stopping { state.wait() }
            if stopping {
                workersRunning -= 1
                state.broadcast()
                state.unlock()
                signalWake()
                return
            }
            let ticket = queue[queueHead]
            queueHead += 1
            if queueHead == queue.count {
                queue.removeAll(keepingCapacity: true)
                queueHead = 0
            }
            inFlight += 1
            let current = intake
            state.unlock()

            let outcome = current.process(ticket)

            state.lock()
            events.emit(outcome.eventLine)
            log.info(outcome.logLine)
            inFlight -= 1
            finished.append(outcome)
            state.broadcast()
            state.unlock()
            signalWake()
        }
    }

    private func collectFinished(now: UInt64) {
        state.lock()
        let done = finished
        finished.removeAll()
        state.unlock()
        guard !done.isEmpty else { return }
        for outcome in done {
            metrics.record(outcome)
            switch outcome.verdict {
            case .accepted:
                counts.accepted += 1
                attempts[outcome.id] = nil
            case .rejected:
                counts.rejected += 1
                attempts[outcome.id] = nil
            case .deferred:
                counts.deferred += 1
                let attempt = (attempts[outcome.id] ?? 0) + 1
                attempts[outcome.id] = attempt
                let delay = min(Int64(1) << Int64(min(attempt - 1, 20)), configuration.watch.retryMaxSeconds)
                retries.append(Retry(due: now + seconds(delay), ticket: ClaimTicket(id: outcome.id, dropName: outcome.dropName)))
                log.info("retrying \(outcome.id) in \(delay) s")
            }
        }
        updateStatus()
    }

    // MARK: Waiting

    private func sleepUntilSomethingHappens(now: UInt64) {
        var deadline = nextRescan
        if !configuration.metricsPath.isEmpty { deadline = min(deadline, nextMetrics) }
        if let earliest = pending.values.map(\.due).min(), queuedCount() < Int(configuration.watch.queueLimit) {
            deadline = min(deadline, max(earliest, now + 5_000_000))
        }
        if let retry = retries.map(\.due).min() { deadline = min(deadline, retry) }
        if !inboxPresent { deadline = min(deadline, nextInboxCheck) }
        if let interval = notifier.watchdogIntervalNanoseconds { deadline = min(deadline, max(nextWatchdog, now + interval / 4)) }
        let milliseconds = Int32(clamping: deadline > now ? (deadline - now) / 1_000_000 + 1 : 0)
        var fds = [pollfd(fd: wake.read.rawValue, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 1, milliseconds)
        drainWake()
    }

    private func signalWake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write.rawValue, &byte, 1)  // a full pipe already means "wake up"
    }

    private func drainWake() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while Glibc.read(wake.read.rawValue, &buffer, buffer.count) > 0 {}
    }

    // MARK: Signals, reload, shutdown

    private func installSignalHandlers() {
        // Ignore first, then handle through dispatch sources, so a signal that
        // arrives in between is not fatal. SIGIO would be sent if a writer opened a
        // file while we briefly held its read lease.
        for signalNumber in [SIGTERM, SIGINT, SIGHUP, SIGIO] { signal(signalNumber, SIG_IGN) }
        for signalNumber in [SIGTERM, SIGINT, SIGHUP] {
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [self] in
                signalLock.lock()
                if signalNumber == SIGHUP { reloadRequested = true } else { termRequested = true }
                signalLock.unlock()
                signalWake()
            }
            source.resume()
            signalSources.append(source)
        }
    }

    private func stopRequested() -> Bool {
        signalLock.lock()
        defer { signalLock.unlock() }
        return termRequested
    }

    private func reloadWanted() -> Bool {
        signalLock.lock()
        defer { signalLock.unlock() }
        let wanted = reloadRequested
        reloadRequested = false
        return wanted
    }

    private func reload() {
        guard let path = setup.configurationPath else {
            log.info("SIGHUP: no configuration file to reload; keeping the defaults")
            return
        }
        notifier.reloading()
        defer { notifier.ready() }
        do {
            var fresh = try Configuration.load(path: path)
            try fresh.checkPaths(in: layout, configurationFile: path)
            if fresh.root != nil && fresh.root != configuration.root {
                log.warning("SIGHUP: the root cannot change while running; keeping \(setup.rootPath)")
                fresh.root = configuration.root
            }
            if fresh.watch.workers != configuration.watch.workers {
                log.warning("SIGHUP: the number of workers changes at the next start")
            }
            let replacement = Intake(layout: layout, configuration: fresh, decoderDirectory: setup.decoderDirectory,
                                     log: log, children: children)
            state.lock()
            intake = replacement
            configuration = fresh
            state.unlock()
            log.info("SIGHUP: configuration reloaded from \(path)")
        } catch {
            log.error("SIGHUP: \(error.message); keeping the configuration in force")
        }
    }

    /// Stops taking drops, lets in-flight ones finish within the grace period,
    /// then kills the decoders still running; their drops stay claimed and their
    /// staging is removed, for the next start.
    private func shutDown() -> Int32 {
        notifier.stopping()
        watch.stop()
        log.info("stopping: no new drops; \(inFlightCount()) in flight get \(configuration.watch.graceSeconds) s to finish")
        state.lock()
        stopping = true
        let abandoned = queue.count - queueHead
        queue.removeAll()
        queueHead = 0
        state.broadcast()
        state.unlock()
        if abandoned > 0 { log.info("\(abandoned) claimed drops stay claimed for the next start") }
        let grace = Date().addingTimeInterval(TimeInterval(configuration.watch.graceSeconds))
        if !waitForWorkers(until: grace) {
            log.warning("grace period over: killing \(children.count) decoders; their drops stay claimed")
            children.abandonAll()
            _ = waitForWorkers(until: Date().addingTimeInterval(30))
        }
        collectFinished(now: monotonicNanoseconds())
        if !configuration.metricsPath.isEmpty { writeMetrics() }
        log.info("stopped: \(counts.accepted) accepted, \(counts.rejected) rejected, \(counts.deferred) deferred")
        return 0
    }

    private func waitForWorkers(until deadline: Date) -> Bool {
        state.lock()
        defer { state.unlock() }
        while workersRunning > 0 {
            if !state.wait(until: deadline) { return workersRunning == 0 }
        }
        return true
    }

    private func inFlightCount() -> Int {
        state.lock()
        defer { state.unlock() }
        return inFlight
    }

    private func writeMetrics() {
        metrics.setQueueDepth(queuedCount() + inFlightCount() + backlog.count + retries.count)
        metrics.setRoot(try? RootGauges.measure(layout, configuration))
        do {
            try metrics.write(to: configuration.metricsPath, root: layout.root)
        } catch {
            log.warning("cannot write metrics to \(configuration.metricsPath): \(error)")
        }
    }

    private func updateStatus() {
        state.lock()
        let queued = queue.count - queueHead, running = inFlight
        state.unlock()
        notifier.status("\(counts.accepted) accepted, \(counts.rejected) rejected, \(counts.deferred) deferred; \(running) in flight, \(queued) queued, \(pending.count) waiting in the inbox")
    }
}
