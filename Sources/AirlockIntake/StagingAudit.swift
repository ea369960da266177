import AirlockConfiguration
import AirlockPolicy
import AirlockSystem
import AirlockText

/// Walks what a decoder child left in staging before it is committed, judges it
/// by the same rules the child was to apply, and readies what passes for the
/// outbox, in one walk that opens each file once.
///
/// The rules: only directories and single-linked regular files with the modes
/// the child leaves; every name passes the path policy and the conflict rules
/// (`EntryPath`, `ConflictTracker`); every file within the per-file quota and all
/// of them within the total; no more entries than the policy's counting rule
/// admits. The child is not trusted to have obeyed: a subverted one could plant a
/// link, a forbidden name or two names the filesystem keeps apart but the policy
/// calls one.
///
/// Each directory is opened from its parent with O_NOFOLLOW and each file with
/// O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, and the kind, link count, mode and size
/// are judged on that descriptor's fstat: what is judged is what is then given
/// the outbox's modes and group and hashed for the manifest, on the same
/// descriptor (the files of each directory on every processor). A mode or group
/// an entry already has is not set again: the child creates entries with the
/// outbox's modes when asked (`Configuration.decoderPolicy`), so the commonest
/// tree needs no fchmod at all. Entries the
/// listing says are neither files nor directories are never opened: fstatat
/// names what they are. Optionally fsyncs everything it visits, after its change.
struct StagingAudit {
    let policy: Policy
    let fsyncEach: Bool
    /// What every entry that passes is given: the outbox's modes and group.
    let modes: OutboxModes
    /// Hashes taken while the decoder ran, used where still provably current.
    var early: EarlyDigests?
    /// Whether each large file's writeback is started as it is hashed: not when
    /// a syncfs on another thread is writing the whole drop back already, behind
    /// which the start (sync_file_range) could wait tens of milliseconds on this
    /// thread, the commit's critical path.
    let startsWriteback: Bool

    struct Totals {
        var files: Int64 = 0
        var directories: Int64 = 0
        var bytes: Int64 = 0
        /// Directories holding nothing: only an entry of their own can have made them.
        var emptyDirectories: Int64 = 0
    }

    /// A regular file of staging as the manifest lists it.
    struct StagedFile: Sendable {
        /// Its path beneath staging, `/`-separated.
        let path: [UInt8]
        let size: Int64
        /// nil only for a file over the per-file limit, which the audit refuses first.
        let sha256: String?
    }

    struct Findings {
        var totals = Totals()
        /// In the order the walk met them.
        var files: [StagedFile] = []
    }

    struct Failure: Error { let detail: String }

    init(policy: Policy, fsyncEach: Bool, modes: OutboxModes, early: EarlyDigests? = nil, startsWriteback: Bool = true) {
        self.policy = policy
        self.fsyncEach = fsyncEach
        self.modes = modes
        self.early = early
        self.startsWriteback = startsWriteback
    }

    func audit(_ staging: FileDescriptor) throws -> Findings {
        var walk = Walk(audit: self)
        try modes.set(onDirectory: staging)
        // No depth limit of its own: every name is judged (depth included) before the walk enters it.
        _ = try walk.enter(staging, owner: nil, path: [])
        try walk.readyWaiting()
        if fsyncEach { try staging.sync() }
        let totals = walk.findings.totals
        let fewest = Policy.fewestEntries(files: Int(totals.files), emptyDirectories: Int(totals.emptyDirectories))
        guard policy.admitsEntries(fewest) else {
            throw Failure(detail: "a tree that needs at least \(fewest) entries, over the \(policy.maxEntries)-entry limit")
        }
        return walk.findings
    }

    /// The mode the child was asked to create every directory with, and the only one the audit admits.
    var childDirectoryMode: FileMode { FileMode(policy.stagedDirectoryMode) }
    /// The mode the child was asked to create every file with, and the only one the audit admits.
    var childFileMode: FileMode { FileMode(policy.stagedFileMode) }

    /// One walk's state: what it has counted and the names it has met.
    private struct Walk {
        let audit: StagingAudit
        var findings = Findings()
        var tracker = ConflictTracker()
        var nodes = 0
        /// The bytes of every file opened so far, on every thread, so that no file
        /// is read once the files opened hold more than the total allows.
        let opened = ByteTally()
        /// Files judged by name and not yet readied, in the order the walk met
        /// them: readied together, so that every processor takes its share (a
        /// directory's few files alone leave the other threads asleep).
        var waiting: [WaitingFile] = []
        /// The directories holding them, open until they are readied.
        var holding: [SharedDescriptor] = []

        var policy: Policy { audit.policy }

        /// Judges every entry of `directory` (at `path` beneath staging), queues
        /// its files to be readied, then enters its directories in turn. Returns
        /// how many entries it holds.
        /// - Parameter owner: `directory`'s owner, kept while its files wait (nil
        ///   for staging itself, which outlives the walk).
        mutating func enter(_ directory: FileDescriptor, owner: SharedDescriptor?, path: [UInt8]) throws -> Int {
            let entries = try directory.entries()
            var files: [(name: [UInt8], path: [UInt8])] = []
            var directories: [(name: [UInt8], path: [UInt8])] = []
            for (name, listed) in entries {
                nodes += 1
                guard nodes <= policy.maxTreeNodes else {
                    throw Failure(detail: "more than \(policy.maxTreeNodes) files and directories, more than the entry limit can make")
                }
                let child = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
                // The listing's kind decides only what is opened; fstat (or fstatat) decides the rest.
                let kind = listed == .regular || listed == .directory ? listed! : try directory.status(of: name).kind
                switch kind {
                case .directory:
                    try judgeName(child, as: .directory)
                    directories.append((name, child))
                case .regular:
                    try judgeName(child, as: .file)
                    files.append((name, child))
                default:
                    throw Failure(detail: "\"\(EscapedName(child))\" is a \(kind)")
                }
            }
            if !files.isEmpty {
                if holding.count >= Self.holdingLimit || waiting.count + files.count > Self.waitingLimit { try readyWaiting() }
                if let owner { holding.append(owner) }
                waiting += files.map { WaitingFile(directory: directory, name: $0.name, path: $0.path) }
            }
            for (name, child) in directories {
                let opened = SharedDescriptor(OwnedDescriptor(try directory.openDirectory(name)))
                let status = try opened.descriptor.status()
                guard status.kind == .directory, status.permissions == audit.childDirectoryMode else {
                    throw Failure(detail: "directory \"\(EscapedName(child))\" has mode \(String(status.permissions, radix: 8))")
                }
                try audit.modes.set(onDirectory: opened.descriptor, status: status)
                findings.totals.directories += 1
                if try enter(opened.descriptor, owner: opened, path: child) == 0 { findings.totals.emptyDirectories += 1 }
                // Its entries' names, which its files' readying does not change.
                if audit.fsyncEach { try opened.descriptor.sync() }
            }
            return entries.count
        }

        /// At most this many directories are held open for files waiting to be
        /// readied: few beside the daemon's other descriptors, with one walk per worker.
        static let holdingLimit = 32
        /// At most this many files wait to be readied.
        static let waitingLimit = 4096

        /// Readies every waiting file, on every processor, and counts them in the
        /// order the walk met them; then lets their directories go.
        mutating func readyWaiting() throws {
            defer {
                waiting.removeAll(keepingCapacity: true)
                holding.removeAll()
            }
            guard !waiting.isEmpty else { return }
            for file in try audit.ready(waiting, opened: opened) {
                try count(file.path, bytes: file.size)
                findings.files.append(file)
            }
        }

        /// The path policy and the conflict rules, as the child applies them to the archive's names.
        private mutating func judgeName(_ raw: [UInt8], as kind: ConflictTracker.Kind) throws {
            let path: EntryPath
            do {
                path = try EntryPath(validating: raw, policy: policy)
            } catch {
                throw Failure(detail: "a name the policy forbids, \"\(EscapedName(raw))\": \(error.reason.rawValue): \(error.detail)")
            }
            if let conflict = tracker.record(path, as: kind) {
                let entry = conflict.entry ?? raw
                throw Failure(detail: "names the policy forbids together, at \"\(EscapedName(entry))\": \(conflict.reason.rawValue): \(conflict.detail)")
            }
        }

        /// The total quota, on the sizes staging holds (each file's own was judged on its descriptor).
        private mutating func count(_ raw: [UInt8], bytes: Int64) throws {
            guard bytes <= policy.maxTotalBytes - findings.totals.bytes else {
                throw Failure(detail: "files holding more than \(policy.maxTotalBytes) bytes in all")
            }
            findings.totals.files += 1
            findings.totals.bytes += bytes
        }
    }
}
