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
import AirlockWatcher
import Foundation
import Synchronization

/// sysexits(3) statuses.
enum ExitStatus {
    static let ok: Int32 = 0
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let unavailable: Int32 = 69
    static let ioError: Int32 = 74
    static let temporaryFailure: Int32 = 75
    static let noPermission: Int32 = 77
    static let configuration: Int32 = 78
}

enum CommandRunner {
    static let log = Log()
    static let events = EventStream()

    static func run(_ command: Command) -> Int32 {
        switch command {
        case .help(let topic):
            print(topic.flatMap(Help.entry)?.text ?? Help.overview)
            return ExitStatus.ok
        case .version:
            print("airlock \(AirlockVersion.current)")
            return ExitStatus.ok
        case .documentation(let output):
            return Documentation.run(output)
        case .initialise(let choice):
            return initialise(choice)
        case .checkPath(let names):
            return checkPath(names)
        case .run(let choice, let once, let instance):
            return runIntake(choice, once: once, instance: instance)
        case .inspect(let file, let choice):
            return inspect(file, choice)
        case .doctor(let choice, let json):
            return doctor(choice, json: json)
        case .quarantineList(let choice, let query, let json):
            return withDesk(choice, .view) { layout, configuration, _ in Operations.list(layout, configuration, query, json: json) }
        case .quarantineShow(let choice, let id, let json):
            return withDesk(choice, .view) { layout, configuration, _ in Operations.show(layout, configuration, id: id, json: json) }
        case .events(let choice, let follow, let after):
            return Operations.events(choice, follow: follow, after: after.flatMap(EventFeed.Cursor.init))
        case .quarantineContents(let choice, let id, let json):
            guard let decoder = decoderDirectory() else { return ExitStatus.unavailable }
            return withDesk(choice, .view) { layout, configuration, _ in
                Operations.contents(layout, configuration, id: id, json: json, decoderDirectory: decoder)
            }
        case .quarantineReindex(let choice):
            return withDesk(choice, .view) { layout, configuration, _ in Operations.reindex(layout, configuration) }
        case .quarantineRelease(let choice, let id, let reason):
            return withDesk(choice, .review) { layout, configuration, analyst in
                Operations.release(layout, configuration, id: id, by: analyst, note: reason)
            }
        case .quarantinePurge(let choice, let ids, let olderThan, let dryRun, let reason):
            return withDesk(choice, .review) { layout, configuration, analyst in
                Operations.purge(layout, configuration, ids: ids, olderThanSeconds: olderThan, dryRun: dryRun, reason: reason, by: analyst)
            }
        case .history(let choice, let query, let json):
            return withDesk(choice, .view) { layout, configuration, _ in Operations.history(layout, configuration, query, json: json) }
        case .status(let choice, let json):
            return withDesk(choice, .view) { layout, configuration, _ in Operations.status(layout, configuration, json: json) }
        case .publish(let choice):
            return publish(choice)
        case .outboxSweep(let choice):
            return withRoot(choice) { layout, configuration in Operations.sweep(layout, configuration) }
        }
    }

    /// Opens the root `choice` names and runs `body` on it; 77 when this user may
    /// not, 78 when it is not a usable root.
    static func withRoot(_ choice: Command.RootChoice, _ body: (RootLayout, Configuration) -> Int32) -> Int32 {
        switch openRoot(choice) {
        case .failed(let status):
            return status
        case .opened(_, let configuration, let layout):
            return body(layout, configuration)
        }
    }

    enum OpenedRoot {
        case opened(root: String, configuration: Configuration, layout: RootLayout)
        case failed(Int32)
    }

    /// As the root's owner when run as the superuser (see RootAccess): the root's
    /// path, its configuration, and its directories opened.
    static func openRoot(_ given: Command.RootChoice) -> OpenedRoot {
        do {
            let (root, configuration) = try resolveAsOwner(given)
            try RootAccess.check(root)
            let layout = try openLayout(try effective(given), root: root, configuration: configuration)
            return .opened(root: root, configuration: configuration, layout: layout)
        } catch {
            return .failed(unreachable(error))
        }
    }

    static func checkPath(_ names: [String]) -> Int32 {
        let policy = Policy()
        var allPass = true
        for name in names {
            let bytes = Array(name.utf8)
            let shown = EscapedName(bytes).shown
            do {
                _ = try EntryPath(validating: bytes, policy: policy)
                print("ok\t\(shown)")
            } catch {
                allPass = false
                print("\(error.reason.rawValue)\t\(shown)\t\(error.detail)")
            }
        }
        return allPass ? ExitStatus.ok : ExitStatus.dataError
    }

    /// The root's directories opened, with the configured paths checked against them.
    static func openLayout(_ choice: Command.RootChoice, root: String,
                           configuration: Configuration) throws(ConfigurationError) -> RootLayout {
        let layout = try RootLayout.open(path: root)
        if case .config(let file) = choice {
            try configuration.checkPaths(in: layout, configurationFile: file)
        } else {
            try configuration.checkPaths(in: layout, configurationFile: nil)
        }
        return layout
    }

    /// Where the decoder programs are; nil (after saying so) when one is missing.
    static func decoderDirectory() -> String? {
        guard let directory = DecoderLocation.directory() else {
            log.error("airlock-decoder and airlock-keyed-decoder must be installed beside airlock or in ../libexec/airlock/ from it; they decode every drop")
            return nil
        }
        return directory
    }

    static func runIntake(_ choice: Command.RootChoice, once: Bool, instance: String? = nil) -> Int32 {
        if let refusal = prepareSupervisor() { return refusal }
        // Until the supervisor's ruleset is applied below, the process stays one
        // thread (Landlock confines only the threads started after it): events and
        // log lines are written by their callers until then.
        defer {
            OutputBuffer.events.drain(seconds: 10)
            OutputBuffer.log.drain(seconds: 10)
        }
        let root: String, configuration: Configuration
        var layout: RootLayout
        switch openRoot(choice) {
        case .failed(let status): return status
        case .opened(let path, let resolved, let opened): (root, configuration, layout) = (path, sharedRootConfiguration(resolved), opened)
        }
        guard let decoder = decoderDirectory() else { return ExitStatus.unavailable }
        let fleet: FleetInstance?
        switch startInstance(given: instance, configuration, &layout) {
        case .single: fleet = nil
        case .started(let started): fleet = started
        case .failed(let status): return status
        }
        defer { fleet?.lock.recordStop() }
        grantConsumers(layout, configuration)
        confineSupervisor(layout, configuration)
        // `run --once` starts the archive decoder's template first, so that it loads
        // on the other core while this process takes its run lock and claims.
        let children = RunningDecoders()
        defer { children.stopStarting() }
        if once && Intake.inboxHasDrops(layout, configuration) {
            Intake.prestartArchiveTemplate(children, configuration: configuration, decoderDirectory: decoder)
        }
        // Events and log lines are written by threads of their own from here on, so
        // that a reader that stops reading stalls no worker and no watchdog; what is
        // queued at the end is written before the exit, unless nobody reads it.
        OutputBuffer.events.startWriting()
        OutputBuffer.log.startWriting()
        // The daemon's start-up probe: what its decoders will be granted, said in its
        // start log before any drop. Recorded when it answers, on a thread of its
        // own, not waited for: it only informs (the log, status, doctor), since every
        // decoder child confines itself, refuses to decode unconfined whatever the
        // probe said, and reports its own confinement, which a late probe does not
        // overwrite. Joined before the daemon ends.
        let probeNoted = once ? DispatchGroup() : startConfinementProbe(layout, configuration, decoder: decoder)
        defer { probeNoted.wait() }
        guard once else {
            return runDaemon(choice, root: root, configuration: configuration, layout: layout, decoder: decoder, fleet: fleet)
        }
        let status = runOnce(root: root, configuration: configuration, layout: layout, decoder: decoder, fleet: fleet,
                             children: children)
        // A run whose drops were decoded has its children's own reports recorded,
        // which say what a probe would (they run beneath the same ruleset a probe
        // started now would); a probe runs only when no child reported (no drop,
        // or none that reached a decoder), so that every run records and logs the
        // state.
        if DecoderConfinementState.current == nil {
            startConfinementProbe(layout, configuration, decoder: decoder).wait()
        }
        return status
    }

    /// Applies the supervisor's Landlock ruleset (while the process is one
    /// thread: it binds only the threads started after it), records it for the
    /// metric and says so in the log.
    static func confineSupervisor(_ layout: RootLayout, _ configuration: Configuration) {
        let confinement = SupervisorConfinement.apply(layout, configuration)
        ConfinementInForce.record("supervisor_landlock", confinement.applied)
        if confinement.applied { log.info(confinement.message) } else { log.warning(confinement.message) }
    }

    /// Starts the confinement probe and records its answer on a thread of its own,
    /// unless a decoder child has reported first; the group is left when it is recorded.
    static func startConfinementProbe(_ layout: RootLayout, _ configuration: Configuration, decoder: String) -> DispatchGroup {
        let noted = DispatchGroup()
        guard let probing = try? Doctor(configuration: configuration, decoderDirectory: decoder).startProbe() else { return noted }
        let state = layout.state
        DispatchQueue.global().async(group: noted) {
            if let found = try? probing.finish() {
                DecoderConfinementState.record(found.confinement, log: log, state: state, unlessObserved: true)
            }
        }
        return noted
    }

    /// What consumers are given at each start, not only by init, so that a root laid
    /// out by an earlier airlock is brought up to date: the hand-back (its outbox
    /// stops being writable by consumers) and read access to the event feed.
    static func grantConsumers(_ layout: RootLayout, _ configuration: Configuration) {
        do {
            let changed = try Acknowledgements.prepare(root: layout.root, configuration)
            if !changed.isEmpty { log.info("hand-back brought up to date: \(changed.joined(separator: ", "))") }
        } catch {
            log.warning("\(error.message); outbox sweep removes nothing a group without its directory acknowledges")
        }
        do {
            try configuration.feedAccess.apply(to: layout, keep: configuration.journalKeep)
        } catch {
            log.warning("cannot set who may read the event feed (\(SettingDefinition.outboxGroup.name)): \(error)")
        }
    }

    /// `airlock run`: the daemon, until a signal stops it.
    static func runDaemon(_ choice: Command.RootChoice, root: String, configuration: Configuration, layout: RootLayout,
                          decoder: String, fleet: FleetInstance?) -> Int32 {
        let configurationPath: String
        switch try? effective(choice) {
        case .config(let file): configurationPath = file
        default: configurationPath = configurationFile(beside: root) ?? root + "/airlock.json"
        }
        let access = ProducerFileAccess.probe(layout)
        if let (status, message) = access.refusal(configuration.watch.completion, root: root) {
            log.error(message)
            return status
        }
        if let warning = access.readWarning { log.warning(warning) }
        if let warning = TemporaryNames.droppedDefaultsWarning(configuration.watch.ignore) { log.warning(warning) }
        log.info("completion rule: " + ProducerFileAccess.describe(configuration.watch.completion))
        var setup = Daemon.Setup(rootPath: root, configurationPath: configurationPath,
                                 configuration: configuration, decoderDirectory: decoder)
        setup.instance = fleet?.lock
        setup.commitMode = fleet?.commitMode
        do {
            return try Daemon(setup, layout: layout).run()
        } catch {
            log.error("cannot start: \(error)")
            return ExitStatus.ioError
        }
    }

    /// `airlock run --once`: the claims a crash left, then every drop now in the
    /// inbox; 75 when any drop was deferred.
    static func runOnce(root: String, configuration: Configuration, layout: RootLayout, decoder: String, fleet: FleetInstance?,
                        children: RunningDecoders) -> Int32 {
        let lock: RunLock?
        do {
            if fleet != nil {
                lock = nil  // the instance's lock, held already, is this run's
            } else if let taken = try RunLock.acquire(layout, mode: "once") {
                lock = taken
            } else {
                log.error("an airlock daemon (pid \(RunLock.holder(layout).pid.map(String.init) ?? "unknown")) is running on \(root); it processes the inbox")
                return ExitStatus.temporaryFailure
            }
        } catch {
            log.error("cannot take the run lock: \(error)")
            return ExitStatus.ioError
        }
        defer { withExtendedLifetime(lock) {} }
        // Decoder templates (`children`) serve this run as they serve a daemon; ended before it exits.
        let intake = Intake(layout: layout, configuration: configuration, decoderDirectory: decoder, log: log,
                            children: children, showsProgress: FileDescriptor(rawValue: 1).isTerminal,
                            commitMode: fleet?.commitMode, instance: fleet?.lock)
        // Receipts queued by this run are written before it exits.
        intake.receipts.expireIfDue()
        defer { intake.receipts.finish() }
        let deferred = Atomic(0)
        let report: @Sendable (DropOutcome) -> Void = { outcome in
            events.emit(outcome.eventLine)
            log.info(outcome.logLine)
            if case .deferred = outcome.verdict { deferred.add(1, ordering: .relaxed) }
        }
        let workers = configuration.workerCount
        do {
            var recovered: [ClaimTicket] = []
            try intake.recover { recovered.append($0) }
            try intake.adoptSingleDaemonClaims { recovered.append($0) }
            intake.takeOverStoppedInstances { recovered.append($0) }
            intake.process(recovered, workers: workers, report)
            try intake.processInbox(workers: workers, report)
        } catch {
            log.error("intake stopped: \(error)")
            return ExitStatus.ioError
        }
        if let fenced = fleet?.lock.fenced() {
            log.error(fenced)
            return ExitStatus.temporaryFailure
        }
        return deferred.load(ordering: .relaxed) > 0 ? ExitStatus.temporaryFailure : ExitStatus.ok
    }

    /// Resolves the configuration `choice` names and finds the decoder programs,
    /// then runs `body`; 78 for a bad configuration, 69 when a decoder is missing.
    static func withDecoders(_ choice: Command.RootChoice, _ body: (Configuration, String) -> Int32) -> Int32 {
        let configuration: Configuration
        do {
            configuration = try configurationOnly(choice)
        } catch {
            return unreachable(error)
        }
        guard let decoder = decoderDirectory() else { return ExitStatus.unavailable }
        return body(configuration, decoder)
    }

    static func inspect(_ file: String, _ choice: Command.RootChoice) -> Int32 {
        withDecoders(choice) { inspect(file, $0, decoder: $1) }
    }

    private static func inspect(_ file: String, _ configuration: Configuration, decoder: String) -> Int32 {
        var json = JSONObjectWriter()
        json.add("event", "inspected")
        json.add("drop", EscapedName(Array(file.utf8)).text)
        let status: Int32
        do {
            var inspection = Inspection(configuration: configuration, decoderDirectory: decoder)
            inspection.showsProgress = FileDescriptor(rawValue: 1).isTerminal
            switch try inspection.inspect(path: file) {
            case .accepted(let format, let files, let bytes):
                json.add("verdict", "accepted")
                json.add("format", format)
                json.add("files", files)
                json.add("bytes", bytes)
                status = ExitStatus.ok
            case .rejected(let rejection):
                json.add("verdict", "rejected")
                if let format = rejection.format { json.add("format", format) }
                json.add("reason", rejection.reason.rawValue)
                if let entry = rejection.entry { json.add("entry", entry) }
                json.add("detail", rejection.detail)
                status = ExitStatus.dataError
            }
        } catch {
            log.error("inspect \(EscapedName(Array(file.utf8))): \(error)")
            return error.errno == .noEntry ? 66 : ExitStatus.ioError
        }
        events.emit(json.text)
        return status
    }
}
