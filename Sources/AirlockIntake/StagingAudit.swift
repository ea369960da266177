import AirlockPolicy
import AirlockSystem
import AirlockText

/// Walks what a decoder child left in staging before it is committed, and
/// judges it by the same rules the child was to apply: only directories and
/// single-linked regular files with the policy's modes; every name passes the
/// path policy and the conflict rules (`EntryPath`, `ConflictTracker`); every
/// file within the per-file quota and all of them within the total; no more
/// entries than the policy's counting rule admits. The child is not trusted to
/// have obeyed: a subverted one could plant a link, a forbidden name or two
/// names the filesystem keeps apart but the policy calls one. Optionally fsyncs
/// everything it visits.
struct StagingAudit {
    let policy: Policy
    let fsyncEach: Bool

    struct Totals {
        var files: Int64 = 0
        var directories: Int64 = 0
        var bytes: Int64 = 0
        /// Directories holding nothing: only an entry of their own can have made them.
        var emptyDirectories: Int64 = 0
    }

    struct Failure: Error { let detail: String }

    func audit(_ staging: FileDescriptor) throws -> Totals {
        var walk = Walk(policy: policy, fsyncEach: fsyncEach)
        try walk.visit(staging, path: [])
        if fsyncEach { try staging.sync() }
        let totals = walk.totals
        let fewest = Policy.fewestEntries(files: Int(totals.files), emptyDirectories: Int(totals.emptyDirectories))
        guard policy.admitsEntries(fewest) else {
            throw Failure(detail: "a tree that needs at least \(fewest) entries, over the \(policy.maxEntries)-entry limit")
        }
        return totals
    }

    /// One walk's state: what it has counted and the names it has met.
    private struct Walk {
        let policy: Policy
        let fsyncEach: Bool
        var totals = Totals()
        var tracker = ConflictTracker()
        var nodes = 0

        init(policy: Policy, fsyncEach: Bool) {
            self.policy = policy
            self.fsyncEach = fsyncEach
        }

        /// Judges every entry of `directory` (whose path beneath staging is `path`), depth first.
        /// Returns how many entries it holds.
        @discardableResult
        mutating func visit(_ directory: FileDescriptor, path: [UInt8]) throws -> Int {
            let names = try directory.entryNames()
            for name in names {
                let child = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
                nodes += 1
                guard nodes <= policy.maxTreeNodes else {
                    throw Failure(detail: "more than \(policy.maxTreeNodes) files and directories, more than the entry limit can make")
                }
                let status = try directory.status(of: name)
                switch status.kind {
                case .directory:
                    guard status.permissions == FileMode(policy.directoryMode) else {
                        throw Failure(detail: "directory \"\(EscapedName(child))\" has mode \(String(status.permissions, radix: 8))")
                    }
                    try judgeName(child, as: .directory)
                    totals.directories += 1
                    try directory.openDirectory(name).closeAfter { sub in
                        if try visit(sub, path: child) == 0 { totals.emptyDirectories += 1 }
                        if fsyncEach { try sub.sync() }
                    }
                case .regular:
                    guard status.linkCount == 1, status.permissions == FileMode(policy.fileMode) else {
                        throw Failure(detail: "file \"\(EscapedName(child))\" has \(status.linkCount) links and mode \(String(status.permissions, radix: 8))")
                    }
                    try judgeName(child, as: .file)
                    try count(child, bytes: status.size)
                    if fsyncEach {
                        try directory.open(name, [.readOnly, .noFollow, .nonBlocking]).closeAfter { (fd) throws(SystemError) in try fd.sync() }
                    }
                default:
                    throw Failure(detail: "\"\(EscapedName(child))\" is a \(status.kind)")
                }
            }
            return names.count
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

        /// The per-file and total quotas, on the sizes staging holds.
        private mutating func count(_ raw: [UInt8], bytes: Int64) throws {
            guard bytes <= policy.maxFileBytes else {
                throw Failure(detail: "file \"\(EscapedName(raw))\" holds \(bytes) bytes, over the \(policy.maxFileBytes)-byte limit")
            }
            guard bytes <= policy.maxTotalBytes - totals.bytes else {
                throw Failure(detail: "files holding more than \(policy.maxTotalBytes) bytes in all")
            }
            totals.files += 1
            totals.bytes += bytes
        }
    }
}
