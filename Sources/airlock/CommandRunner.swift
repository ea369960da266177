import AirlockCore
import AirlockPolicy
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
        case .initialise(let root):
            return initialise(root)
        case .checkPath(let names):
            return checkPath(names)
        case .run(let choice, let once):
            return runIntake(choice, once: once)
        case .inspect(let file, let choice):
            return inspect(file, choice)
        case .doctor(let choice, let json):
            return doctor(choice, json: json)
        case .quarantineList(let choice, let query, let json):
            return withDesk(choice, .view) { layout, configuration, _ in Operations.list(layout, configuration, query, json: json) }
        case .quarantineShow(let choice, let id, let json):
            return withDesk(choice, .view) { layout, configuration, _ in Operations.show(layout, configuration, id: id, json: json) }
        case .events(let choice, let follow, let after):
            return withRoot(choice) { layout, configuration in
                Operations.events(layout, configuration, follow: follow, after: after.flatMap(EventFeed.Cursor.init))
            }
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
        case .outboxSweep(let choice):
            return withRoot(choice) { layout, _ in
                do throws(SystemError) {
                    let removed = try OutboxSweep.run(layout)
                    log.info("removed \(removed.count) outbox entr\(removed.count == 1 ? "y" : "ies") consumers handed back")
                    return ExitStatus.ok
                } catch {
                    log.error("outbox sweep: \(error)")
                    return error.errno == .permissionDenied || error.errno == .notPermitted ? 77 : ExitStatus.ioError
                }
            }
        }
    }

    /// Opens the root `choice` names and runs `body` on it; 77 when this user may
    /// not, 78 when it is not a usable root.
    static func withRoot(_ choice: Command.RootChoice, _ body: (RootLayout, Configuration) -> Int32) -> Int32 {
        switch openRoot(choice) {
        case .failed(let status):
            return status
        case .opened(_, let configuration, let layout):
            defer { layout.close() }
            return body(layout, configuration)
        }
    }

    enum OpenedRoot {
        case opened(root: String, configuration: Configuration, layout: RootLayout)
        case failed(Int32)
    }

    /// As the root's owner when run as the superuser (see RootAccess): the root's
    /// path, its configuration, and its directories opened.
    static func openRoot(_ choice: Command.RootChoice) -> OpenedRoot {
        do {
            try becomeOwner(rootPath(choice) ?? resolve(choice).root)
            let (root, configuration, layout) = try openLayout(choice)
            return .opened(root: root, configuration: configuration, layout: layout)
        } catch let error as RootAccessError {
            log.error(error.message)
            return .failed(ExitStatus.noPermission)
        } catch let error as ConfigurationError {
            log.error(error.message)
            return .failed(ExitStatus.configuration)
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
    }

    /// The root's path when it is known without reading a configuration file.
    static func rootPath(_ choice: Command.RootChoice) -> String? {
        switch choice {
        case .root(let root): return root
        case .implicit: return "var"
        case .config: return nil
        }
    }

    /// Acts as the owner of `root` when run as the superuser, then checks this
    /// user may open the root's directories.
    static func becomeOwner(_ root: String) throws(RootAccessError) {
        if let note = try RootAccess.assumeOwner(of: root) { log.info(note) }
        try RootAccess.check(root)
    }

    static func initialise(_ root: String) -> Int32 {
        do {
            if let note = try RootAccess.assumeOwner(of: root) { log.info(note) }
        } catch {
            log.error(error.message)
            return ExitStatus.noPermission
        }
        do {
            let created = try RootLayout.initialise(path: root)
            log.info(created.isEmpty ? "root \(root) is already laid out" : "laid out root \(root): created \(created.joined(separator: ", "))")
            return ExitStatus.ok
        } catch {
            log.error(error.message)
            return ExitStatus.configuration
        }
    }

    static func checkPath(_ names: [String]) -> Int32 {
        let policy = Policy()
        var allPass = true
        for name in names {
            let bytes = Array(name.utf8)
            let shown = EscapedName(bytes).text
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

    /// The root and its configuration for `choice`.
    static func resolve(_ choice: Command.RootChoice) throws(ConfigurationError) -> (root: String, configuration: Configuration) {
        switch choice {
        case .config(let file):
            let configuration = try Configuration.load(path: file)
            guard let root = configuration.root else {
                throw ConfigurationError("\(file): names no root (add \"root\": \"/path\")")
            }
            if root.hasPrefix("/") { return (root, configuration) }
            let base = URL(fileURLWithPath: file).deletingLastPathComponent()
            return (base.appendingPathComponent(root).path, configuration)
        case .root(let root):
            return (root, try configurationBeside(root))
        case .implicit:
            return ("var", try configurationBeside("var"))
        }
    }

    /// The root and its configuration for `choice`, opened, with the configured
    /// paths checked against it.
    /// The root, its configuration and its directories, with the configured paths checked.
    static func openLayout(_ choice: Command.RootChoice) throws(ConfigurationError) -> (String, Configuration, RootLayout) {
        let (root, configuration) = try resolve(choice)
        let layout = try RootLayout.open(path: root)
        do {
            if case .config(let file) = choice {
                try configuration.checkPaths(in: layout, configurationFile: file)
            } else {
                try configuration.checkPaths(in: layout, configurationFile: nil)
            }
        } catch {
            layout.close()
            throw error
        }
        return (root, configuration, layout)
    }

    static func configurationBeside(_ root: String) throws(ConfigurationError) -> Configuration {
        let path = root + "/airlock.json"
        guard (try? FileStatus(path: path)) != nil else { return Configuration() }
        return try Configuration.load(path: path)
    }

    /// Where the decoder programs are; nil (after saying so) when one is missing.
    static func decoderDirectory() -> String? {
        guard let directory = DecoderLocation.directory() else {
            log.error("airlock-decoder and airlock-keyed-decoder must be installed beside airlock or in ../libexec/airlock/ from it; they decode every drop")
            return nil
        }
        return directory
    }

    static func runIntake(_ choice: Command.RootChoice, once: Bool) -> Int32 {
        // The supervisor needs no privilege it does not start with; nothing it or a
        // decoder executes may gain one.
        do {
            try forbidNewPrivileges()
        } catch {
            log.error("\(error)")
            return ExitStatus.ioError
        }
        // A read lease the intake holds (on a drop while the watcher checks it, on a
        // decoder's file while it is hashed) is broken with SIGIO, whose default
        // action would end the process; the lease is checked instead.
        Signal.io.ignore()
        let root: String, configuration: Configuration, layout: RootLayout
        switch openRoot(choice) {
        case .failed(let status): return status
        case .opened(let path, let resolved, let opened): (root, configuration, layout) = (path, resolved, opened)
        }
        defer { layout.close() }
        guard let decoder = decoderDirectory() else { return ExitStatus.unavailable }
        // What the decoders will be granted, said before the first drop. The probe
        // starts before the supervisor's own ruleset, which would keep it from
        // reading /proc, and is waited for once the intake is ready to decode.
        let probing = try? Doctor(configuration: configuration, decoderDirectory: decoder).startProbe()
        let confinement = SupervisorConfinement.apply(layout, configuration)
        ConfinementInForce.record("supervisor_landlock", confinement.applied)
        if confinement.applied { log.info(confinement.message) } else { log.warning(confinement.message) }
        let sayConfinement = {
            if let found = try? probing?.finish() {
                DecoderConfinementState.record(found.confinement, log: log, state: layout.state)
            }
        }
        guard once else {
            sayConfinement()
            return runDaemon(choice, root: root, configuration: configuration, layout: layout, decoder: decoder)
        }
        return runOnce(root: root, configuration: configuration, layout: layout, decoder: decoder, beforeDecoding: sayConfinement)
    }

    /// `airlock run`: the daemon, until a signal stops it.
    static func runDaemon(_ choice: Command.RootChoice, root: String, configuration: Configuration, layout: RootLayout,
                          decoder: String) -> Int32 {
        let configurationPath: String
        switch choice {
        case .config(let file): configurationPath = file
        case .root, .implicit: configurationPath = root + "/airlock.json"
        }
        let setup = Daemon.Setup(rootPath: root, configurationPath: configurationPath,
                                 configuration: configuration, decoderDirectory: decoder)
        do {
            return try Daemon(setup, layout: layout).run()
        } catch {
            log.error("cannot start: \(error)")
            return ExitStatus.ioError
        }
    }

    /// `airlock run --once`: the claims a crash left, then every drop now in the
    /// inbox; 75 when any drop was deferred.
    /// - Parameter beforeDecoding: runs exactly once: when the run lock is held
    ///   and the archive decoder's template is loading, before any drop is
    ///   decoded, or before the run gives up for want of the lock.
    static func runOnce(root: String, configuration: Configuration, layout: RootLayout, decoder: String,
                        beforeDecoding: () -> Void) -> Int32 {
        let lock: RunLock
        do {
            guard let taken = try RunLock.acquire(layout, mode: "once") else {
                beforeDecoding()
                log.error("an airlock daemon (pid \(RunLock.holder(layout).pid.map(String.init) ?? "unknown")) is running on \(root); it processes the inbox")
                return ExitStatus.temporaryFailure
            }
            lock = taken
        } catch {
            beforeDecoding()
            log.error("cannot take the run lock: \(error)")
            return ExitStatus.ioError
        }
        defer { withExtendedLifetime(lock) {} }
        // Decoder templates serve this run as they serve a daemon; ended before it exits.
        let children = DecoderChildren()
        defer { children.stopStarting() }
        let intake = Intake(layout: layout, configuration: configuration, decoderDirectory: decoder, log: log,
                            children: children, showsProgress: FileDescriptor(rawValue: 1).isTerminal)
        // The template loads on the other core while the probe finishes and the drops are claimed.
        if intake.inboxHasDrops() { intake.prestartArchiveTemplate() }
        beforeDecoding()
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
            intake.process(recovered, workers: workers, report)
            try intake.processInbox(workers: workers, report)
        } catch {
            log.error("intake stopped: \(error)")
            return ExitStatus.ioError
        }
        return deferred.load(ordering: .relaxed) > 0 ? ExitStatus.temporaryFailure : ExitStatus.ok
    }

    /// Resolves the configuration `choice` names and finds the decoder programs,
    /// then runs `body`; 78 for a bad configuration, 69 when a decoder is missing.
    static func withDecoders(_ choice: Command.RootChoice, _ body: (Configuration, String) -> Int32) -> Int32 {
        let configuration: Configuration
        do {
            configuration = try resolve(choice).configuration
        } catch {
            log.error(error.message)
            return ExitStatus.configuration
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
