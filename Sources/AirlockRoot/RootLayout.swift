import AirlockConfiguration
import AirlockSystem
import Foundation

/// An airlock root opened for work: a descriptor for each of its directories, all
/// checked to sit on one filesystem, because every hand-over is a rename.
///
/// The layout is a value copied into every part of the intake; its directories
/// are owned by reference and close when the last copy goes, so no copy has to
/// be closed, and none can close them under another.
public struct RootLayout: Sendable {
    public let path: String
    public let root: FileDescriptor
    public let outbox: FileDescriptor
    public let quarantine: FileDescriptor
    public let state: FileDescriptor
    /// This process's claims and staging: `state/claimed` and `state/staging`, or in
    /// a fleet the instance's own `state/claimed/NAME` and `state/staging/NAME`.
    public let claimed: FileDescriptor
    public let staging: FileDescriptor
    /// The instance of a fleet this layout is opened for; nil for a single daemon.
    public var instance: String? = nil
    /// `state/claimed` and `state/staging` themselves (the same descriptors as
    /// `claimed` and `staging` for a single daemon).
    public var claimedRoot: FileDescriptor
    public var stagingRoot: FileDescriptor
    /// In a fleet, `state/journal/`, where each instance keeps its journal.
    public var journalDirectory: FileDescriptor? = nil
    /// The name of that directory in `state/`.
    public static let instanceJournals: [UInt8] = Array("journal".utf8)
    /// Who closes the descriptors above: the root's own, and in a fleet the instance's.
    private let owners: [SharedDescriptors]

    /// A layout of the descriptors `directories` owns: root, outbox, quarantine,
    /// state, claimed and staging, in that order.
    init(path: String, directories: SharedDescriptors) {
        let fds = directories.descriptors
        self.init(path: path, root: fds[0], outbox: fds[1], quarantine: fds[2], state: fds[3], claimed: fds[4], staging: fds[5],
                  owners: [directories])
    }

    private init(path: String, root: FileDescriptor, outbox: FileDescriptor, quarantine: FileDescriptor, state: FileDescriptor,
                 claimed: FileDescriptor, staging: FileDescriptor, owners: [SharedDescriptors]) {
        self.owners = owners
        self.path = path
        self.root = root
        self.outbox = outbox
        self.quarantine = quarantine
        self.state = state
        self.claimed = claimed
        self.staging = staging
        self.claimedRoot = claimed
        self.stagingRoot = staging
    }

    /// The instance's layout: `base`'s directories but its claims and staging, and
    /// `instance`'s claimed, staging and journal directories, in that order.
    private init(_ base: RootLayout, instance: String, _ directories: SharedDescriptors) {
        let fds = directories.descriptors
        self.init(path: base.path, root: base.root, outbox: base.outbox, quarantine: base.quarantine, state: base.state,
                  claimed: fds[0], staging: fds[1], owners: base.owners + [directories])
        self.instance = instance
        self.claimedRoot = base.claimed
        self.stagingRoot = base.staging
        self.journalDirectory = fds[2]
    }

    /// This root opened for the instance `name` of a fleet: its claims and staging
    /// are `state/claimed/NAME` and `state/staging/NAME`, its journal in
    /// `state/journal/` (each made, 0700, when missing). The returned layout holds
    /// this one's directories as well as the instance's: either may be dropped first.
    public func forInstance(_ name: String) throws(SystemError) -> RootLayout {
        let bytes = Array(name.utf8)
        var opened = OwnedDescriptors()
        for (parent, child) in [(claimed, bytes), (staging, bytes), (state, RootLayout.instanceJournals)] {
            do {
                try parent.makeDirectory(child, mode: 0o700)
            } catch where error.errno == .exists {
            }
            let fd = OwnedDescriptor(try parent.openDirectory(child))
            guard try fd.descriptor.status().device == root.status().device else {
                throw SystemError("check filesystem", bytes, .crossDevice)
            }
            opened.append(fd)
        }
        return RootLayout(self, instance: name, SharedDescriptors(opened))
    }

    static let directories: [(path: [String], mode: FileMode)] = [
        (["inbox"], 0o755), (["outbox"], 0o755), (["quarantine"], 0o700),
        (["state"], 0o700), (["state", "claimed"], 0o700), (["state", "staging"], 0o700),
    ]

    /// Opens an existing root; a missing directory or a second filesystem is a
    /// configuration error. Every descriptor it opens has an owner until the
    /// layout takes it, so each way out closes what it had opened.
    public static func open(path: String) throws(ConfigurationError) -> RootLayout {
        let root: OwnedDescriptor
        do {
            // As root (on a root root owns), not through a link another user owns:
            // the check that found the owner walked the same way (RootAccess).
            let directory = Accounts.effectiveUserID == 0 ? try TrustedPath.openReadableDirectory(path: path)
                : try FileDescriptor.openDirectory(path: path)
            root = OwnedDescriptor(directory)
        } catch where error.errno == .tooManyLinks && error.operation.hasPrefix("refuse") {
            throw ConfigurationError("root \(path): \(error.operation) on the way (\(error.name ?? "")): give the path it points to",
                                     refusesAccess: true)
        } catch {
            throw ConfigurationError("root \(path): \(error.errno); create it with 'airlock init --root \(path)'")
        }
        var opened = OwnedDescriptors()
        do {
            let rootStatus = try root.descriptor.status()
            for (components, _) in directories {
                let directory = try Root(root.descriptor).openDirectory(components.map { Array($0.utf8) })
                guard try directory.descriptor.status().device == rootStatus.device else {
                    throw ConfigurationError("root \(path): \(components.joined(separator: "/")) is on another filesystem; every directory of a root must be on one filesystem")
                }
                // The inbox is not kept open: a directory held open is not freed when it
                // is deleted, and then inotify never reports IN_DELETE_SELF. See openInbox().
                if components != ["inbox"] { opened.append(directory) }
            }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError("root \(path) is not a complete airlock root (\(error)); run 'airlock init --root \(path)'")
        }
        do {
            let version = try LayoutVersion.read(opened[2])
            guard version <= LayoutVersion.current else { throw ConfigurationError(LayoutVersion.newerMessage(path, version)) }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError("root \(path): cannot read state/\(LayoutVersion.fileName): \(error)")
        }
        var kept = OwnedDescriptors()
        kept.append(root)
        for directory in opened.take() { kept.append(OwnedDescriptor(directory)) }
        return RootLayout(path: path, directories: SharedDescriptors(kept))
    }

    /// Lays out a root: the directories, with their modes, and airlock.json with
    /// every default spelled out. Idempotent: what exists is kept, an existing
    /// airlock.json is validated, not rewritten.
    ///
    /// - Parameter configurationFile: the configuration this root is run with when it
    ///   is not `ROOT/airlock.json` (--config, the system configuration): validated,
    ///   and then no `ROOT/airlock.json` is written.
    public static func initialise(path: String, configurationFile: String? = nil) throws(ConfigurationError) -> [String] {
        var created: [String] = []
        if let existing = try? FileStatus(path: path) {
            guard existing.kind == .directory else { throw ConfigurationError("root \(path): exists and is not a directory") }
        } else {
            do {
                try FileDescriptor.makeDirectories(path: path)
            } catch {
                throw ConfigurationError("root \(path): cannot create it: \(error)")
            }
            created.append(path)
        }
        do throws(SystemError) {
            try FileDescriptor.openDirectory(path: path).closeAfter { (root) throws(SystemError) in
                let rootStatus = try root.status()
                for (components, mode) in directories {
                    var parents = OwnedDescriptors()
                    var current = root
                    for (position, component) in components.enumerated() {
                        let name = Array(component.utf8)
                        do throws(SystemError) {
                            try current.makeDirectory(name, mode: 0o700)
                            let made = OwnedDescriptor(try current.openDirectory(name))
                            if position == components.count - 1 { try made.descriptor.changeMode(mode) }
                            parents.append(made)
                            created.append(components[0...position].joined(separator: "/") + "/")
                        } catch where error.errno == .exists {
                            parents.append(OwnedDescriptor(try current.openDirectory(name)))
                        }
                        current = parents[parents.count - 1]
                    }
                    guard try current.status().device == rootStatus.device else {
                        throw SystemError("check filesystem", Array(components.joined(separator: "/").utf8), .crossDevice)
                    }
                }
            }
        } catch where error.errno == .crossDevice {
            throw ConfigurationError("root \(path): \(error.name ?? "a directory") is on another filesystem; every directory of a root must be on one filesystem, because every hand-over is a rename")
        } catch {
            throw ConfigurationError("root \(path): \(error)")
        }
        if let upgrade = try LayoutVersion.record(path, fresh: created.contains("state/claimed/")) { created.append(upgrade) }
        let configPath = configurationFile ?? path + "/airlock.json"
        let configuration: Configuration
        if configurationFile != nil || (try? FileStatus(path: configPath)) != nil {
            configuration = try Configuration.load(path: configPath)
        } else {
            configuration = try writeDefaultConfiguration(root: path)
            created.append("airlock.json")
        }
        return created + (try prepareHandBack(path, configuration))
    }

    /// Acknowledgements.prepare on the root at `path`: what it changed.
    private static func prepareHandBack(_ path: String, _ configuration: Configuration) throws(ConfigurationError) -> [String] {
        let root: FileDescriptor
        do {
            root = try FileDescriptor.openDirectory(path: path)
        } catch {
            throw ConfigurationError("root \(path): \(error)")
        }
        let ownedRoot = OwnedDescriptor(root)
        return try Acknowledgements.prepare(root: ownedRoot.descriptor, configuration)
    }

    /// Writes airlock.json with every default spelled out, atomically, 0666 narrowed
    /// by the umask as any new file the operator makes.
    private static func writeDefaultConfiguration(root path: String) throws(ConfigurationError) -> Configuration {
        var configuration = Configuration()
        configuration.root = URL(fileURLWithPath: path).standardizedFileURL.path
        do throws(SystemError) {
            try FileDescriptor.openDirectory(path: path).closeAfter { (root) throws(SystemError) in
                try root.replaceAtomically(Array("airlock.json".utf8), with: Array(configuration.rendered().utf8),
                                           temporary: Array(".airlock.json.tmp".utf8), .init(mode: 0o666))
            }
        } catch {
            throw ConfigurationError("\(path)/airlock.json: cannot write: \(error)")
        }
        return configuration
    }

    /// Opens the inbox for one pass; nil when it is missing or on another
    /// filesystem (it was replaced by something else).
    public func openInbox() throws(SystemError) -> FileDescriptor? {
        let inbox: FileDescriptor
        do {
            inbox = try root.openDirectory(Array("inbox".utf8))
        } catch where error.errno == .noEntry || error.errno == .notDirectory || error.errno == .tooManyLinks {
            return nil
        }
        let owned = OwnedDescriptor(inbox)
        guard try owned.descriptor.status().device == root.status().device else { return nil }
        return owned.take()
    }
}
