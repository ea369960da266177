import AirlockPolicy
import AirlockSystem
import AirlockText

/// `.airlock:manifest.json` in every accepted outbox entry: every file's path,
/// size, SHA-256 and detected type, and the drop's id, name, size, hash and
/// uploader.
///
/// It is written into staging after the audit and before the rename that
/// commits the entry, so the entry and its manifest appear in the outbox in one
/// rename: a consumer never sees one without the other. A sibling file beside
/// the entry could not give that (two renames, with a window between them). Its
/// name cannot be an archive's file: the path policy refuses `:` in every
/// component of every entry, and rendered keyed output is named `memo.json` or
/// `memos.json`.
public enum Manifest {
    public static let name: [UInt8] = Array(".airlock:manifest.json".utf8)
    public static let version: Int64 = 1

    /// What the manifest says about the drop.
    struct Drop {
        let id: String
        let name: [UInt8]
        let format: String
        let size: Int64?
        let sha256: String?
        let uploader: Uploader?
        let types: [(entry: String, type: String)]?
    }

    /// Writes the manifest of `staging` (already audited) into it. Not synced
    /// here: the commit makes staging durable as a whole after this, with the one
    /// syncfs, or with `commit.sync: "fsync"` by the outbox modes' fsync of every
    /// entry, which comes after the manifest too.
    static func write(into staging: FileDescriptor, _ drop: Drop, policy: Policy) throws(SystemError) {
        var json = JSONObjectWriter()
        json.add("manifest_version", version)
        json.add("time", timestamp())
        json.add("id", drop.id)
        json.add("drop", EscapedName(drop.name).text)
        json.add("format", drop.format)
        if let size = drop.size { json.add("size", size) }
        if let sha256 = drop.sha256 { json.add("sha256", sha256) }
        drop.uploader?.add(to: &json)
        let types = Dictionary((drop.types ?? []).map { ($0.entry, $0.type) }, uniquingKeysWith: { first, _ in first })
        var files: [JSONObjectWriter] = []
        try describe(staging, prefix: [], depth: 0, policy: policy, types: types, into: &files)
        json.add("outbox_files", objects: files)
        try staging.open(name, [.writeOnly, .create, .exclusive, .noFollow], mode: FileMode(policy.fileMode)).closeAfter { (fd) throws(SystemError) in
            try fd.changeMode(FileMode(policy.fileMode))
            try fd.writeAll(Array((json.text + "\n").utf8))
        }
    }

    /// Every regular file beneath `directory`, in byte order of its path; the
    /// files of each directory are hashed together, on every processor.
    private static func describe(_ directory: FileDescriptor, prefix: [UInt8], depth: Int, policy: Policy, types: [String: String],
                                 into files: inout [JSONObjectWriter]) throws(SystemError) {
        // The audit has bounded the tree already; this only keeps the walk finite.
        guard depth <= policy.maxDepth else { return }
        var children: [(name: [UInt8], status: FileStatus)] = []
        for child in try directory.entryNames().sorted(by: { $0.lexicographicallyPrecedes($1) }) where child != name {
            children.append((child, try directory.status(of: child)))
        }
        let regular = children.filter { $0.status.kind == .regular }.map(\.name)
        var hashes = try Digest.sha256(ofFiles: regular, in: directory, limit: policy.maxFileBytes).makeIterator()
        for (child, status) in children {
            let path = prefix.isEmpty ? child : prefix + [UInt8(ascii: "/")] + child
            switch status.kind {
            case .directory:
                let inner = try directory.openDirectory(child)
                try inner.closeAfter { (fd) throws(SystemError) in
                    try describe(fd, prefix: path, depth: depth + 1, policy: policy, types: types, into: &files)
                }
            case .regular:
                let shown = EscapedName(path).text
                var file = JSONObjectWriter()
                file.add("entry", shown)
                file.add("entry_size", status.size)
                if let sha256 = hashes.next() ?? nil { file.add("sha256", sha256) }
                if let type = types[shown] { file.add("mime_type", type) }
                files.append(file)
            default:
                continue
            }
        }
    }
}
