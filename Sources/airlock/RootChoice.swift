import AirlockConfiguration
import AirlockJournal
import AirlockRoot
import AirlockSystem
import Foundation

/// Which root and configuration a command works on, and `init`.
extension CommandRunner {
    /// What `.implicit` (neither --root nor --config) means for this airlock: `./var`
    /// in a build tree (make run); the system configuration when installed, which
    /// must then exist: an installed airlock never falls back on a `./var` in the
    /// working directory.
    ///
    /// - Throws: a ConfigurationError naming the file and both ways out (exit 78).
    static func effective(_ choice: Command.RootChoice) throws(ConfigurationError) -> Command.RootChoice {
        guard case .implicit = choice else { return choice }
        guard let system = Installation.current.systemConfiguration else { return .root("var") }
        guard (try? FileStatus(path: system)) != nil else {
            throw ConfigurationError("no --root or --config given, and there is no \(system): an installed airlock "
                + "takes its root from that file (the package installs one naming /var/lib/airlock); "
                + "create it, or give --root DIR or --config FILE")
        }
        return .config(system)
    }

    /// The root and its configuration for `choice`, read as their owner: run as the
    /// superuser, a command becomes the owner of the root (`--root`) or of the
    /// directory holding the configuration (`--config`) before it reads a byte of
    /// either, so neither a link planted there nor the file's `root` key can make
    /// it read or act as root on that user's behalf. With `--config` in a directory
    /// root owns (/etc/airlock), the command then becomes the owner of the root the
    /// file names.
    /// Neither --root nor --config means what `effective` says (the system
    /// configuration of an installed airlock, ./var in a build tree).
    static func resolveAsOwner(_ given: Command.RootChoice) throws -> (root: String, configuration: Configuration) {
        switch try effective(given) {
        case .config(let file):
            let (root, configuration) = try configurationAsOwner(file)
            if let note = try RootAccess.assumeOwner(of: root) { log.info(note) }
            return (root, configuration)
        case .root(let root):
            if let note = try RootAccess.assumeOwner(of: root) { log.info(note) }
            return (root, try configurationBeside(root))
        case .implicit:
            if let note = try RootAccess.assumeOwner(of: "var") { log.info(note) }
            return ("var", try configurationBeside("var"))
        }
    }

    /// A configuration file read as the owner of the directory that holds it (see
    /// ConfigurationSource), and the root it names.
    static func configurationAsOwner(_ file: String) throws -> (root: String, configuration: Configuration) {
        let source = try ConfigurationSource.locate(file)
        if let note = try RootAccess.assumeOwner(of: source) { log.info(note) }
        let configuration = try source.read()
        return (try rootNamed(by: configuration, file: file), configuration)
    }

    /// The root a configuration file names: its `root`, relative to the file's directory.
    static func rootNamed(by configuration: Configuration, file: String) throws(ConfigurationError) -> String {
        guard let root = configuration.root else {
            throw ConfigurationError("\(file): names no root (add \"root\": \"/path\")")
        }
        if root.hasPrefix("/") { return root }
        let base = URL(fileURLWithPath: file).deletingLastPathComponent()
        return base.appendingPathComponent(root).path
    }

    /// Says why a root or its configuration could not be reached and gives the exit
    /// status: 77 where access is refused (the root, or who owns the configuration
    /// or a link on its way), 78 for a configuration that is missing or wrong.
    static func unreachable(_ error: any Error) -> Int32 {
        switch error {
        case let error as RootAccessError:
            log.error(error.message)
            return ExitStatus.noPermission
        case let error as ConfigurationError:
            log.error(error.message)
            return error.refusesAccess ? ExitStatus.noPermission : ExitStatus.configuration
        default:
            preconditionFailure("unexpected error \(error)")
        }
    }

    /// The configuration alone, for commands that need no root (doctor, inspect): an
    /// installation without a system configuration uses the defaults.
    static func configurationOnly(_ choice: Command.RootChoice) throws -> Configuration {
        if case .implicit = choice, let system = Installation.current.systemConfiguration, (try? FileStatus(path: system)) == nil {
            return Configuration()
        }
        return try resolveAsOwner(choice).configuration
    }

    /// The configuration of the root at `root`: `ROOT/airlock.json` if there is one;
    /// otherwise the system configuration when it names this very root (so that
    /// `--root /var/lib/airlock` on a packaged server means what the service
    /// reads); otherwise the defaults.
    static func configurationBeside(_ root: String) throws(ConfigurationError) -> Configuration {
        guard let path = configurationFile(beside: root) else { return Configuration() }
        return try Configuration.load(path: path)
    }

    /// The file `configurationBeside` reads, or nil for the defaults.
    static func configurationFile(beside root: String) -> String? {
        let own = root + "/airlock.json"
        if (try? FileStatus(path: own)) != nil { return own }
        guard let system = Installation.current.systemConfiguration, (try? FileStatus(path: system)) != nil,
              let named = namedRoot(system),
              let mine = try? FileStatus(path: root), let theirs = try? FileStatus(path: named),
              mine.device == theirs.device, mine.inode == theirs.inode else { return nil }
        return system
    }

    /// Creates the journal where there is none, and gives the consumers
    /// (`outbox.group`) read access to the event feed, or takes it away (see FeedAccess).
    static func grantFeed(root: String, configurationFile: String?) throws(ConfigurationError) {
        let configuration: Configuration
        if let configurationFile {
            configuration = try Configuration.load(path: configurationFile)
        } else {
            configuration = try configurationBeside(root)
        }
        let layout = try RootLayout.open(path: root)
        do {
            // Made here rather than by the first drop's append, which would wait for its fsyncs.
            try Journal(layout, configuration).create()
        } catch {
            throw ConfigurationError("root \(root): cannot create the journal in state/: \(error)")
        }
        do {
            try configuration.feedAccess.apply(to: layout, keep: configuration.journalKeep)
        } catch {
            throw ConfigurationError("root \(root): cannot give \(SettingDefinition.outboxGroup.name) \"\(configuration.outboxGroup)\" read access to the event feed "
                + "in state/: \(error) (airlock's user must own state/ and be a member of that group)")
        }
    }

    /// The `root` a configuration file names, read without validating the rest (a
    /// file with a mistake must still be found, so that its mistake is reported).
    static func namedRoot(_ file: String) -> String? {
        guard let data = FileManager.default.contents(atPath: file),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let root = object["root"] as? String else { return nil }
        return root.hasPrefix("/") ? root : URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(root).path
    }

    /// `airlock init`: lays out the root `choice` names. With a configuration file
    /// (--config, or an installation's system configuration) that file is validated
    /// and no `ROOT/airlock.json` is written beside it.
    static func initialise(_ given: Command.RootChoice) -> Int32 {
        let root: String
        let file: String?
        do {
            let choice = try effective(given)
            switch choice {
            case .config(let path):
                file = path
                root = try configurationAsOwner(path).root
            case .root(let path):
                (file, root) = (nil, path)
            case .implicit:
                (file, root) = (nil, "var")
            }
            if let note = try RootAccess.assumeOwner(of: root, orNearestAbove: true) { log.info(note) }
        } catch {
            return unreachable(error)
        }
        do {
            let created = try RootLayout.initialise(path: root, configurationFile: file)
            try grantFeed(root: root, configurationFile: file)
            log.info(created.isEmpty ? "root \(root) is already laid out" : "laid out root \(root): created \(created.joined(separator: ", "))")
            return ExitStatus.ok
        } catch {
            log.error(error.message)
            return error.refusesAccess ? ExitStatus.noPermission : ExitStatus.configuration
        }
    }
}
