import AirlockConfiguration
import AirlockEvents
import AirlockPolicy
import AirlockSystem
import AirlockText

/// `.airlock:manifest.json` in every accepted outbox entry: every file's path,
/// size, SHA-256, content classes (airlock's structural verdict, always) and
/// MIME type (libmagic's description, only where libmagic ran), and the drop's
/// id, name, size, hash and uploader.
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
    /// 2: `classes` on every file; `mime_type` only where libmagic ran.
    public static let version: Int64 = 2

    /// What the manifest says about the drop.
    struct Drop {
        let id: String
        let name: [UInt8]
        let format: String
        let size: Int64?
        let sha256: String?
        let uploader: Uploader?
        let types: [(entry: String, type: String)]?
        let classes: [ClassifiedEntry]?
    }

    /// Gives `staging` (already audited) the outbox's modes and group and writes
    /// its manifest into it, in one walk: each directory's files are hashed once
    /// their modes are set. Synced only with `fsyncEach` (`commit.sync: "fsync"`), and
    /// then every entry after its change and the manifest after it is written;
    /// otherwise the commit's one syncfs makes staging durable as a whole.
    /// Files in `early` are not hashed again.
    static func write(into staging: FileDescriptor, _ drop: Drop, policy: Policy, modes: OutboxModes,
                      fsyncEach: Bool, early: EarlyDigests? = nil) throws(SystemError) {
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
        let classes = Dictionary((drop.classes ?? []).map { ($0.entry, $0.classes) }, uniquingKeysWith: { first, _ in first })
        var files: [(path: [[UInt8]], file: JSONObjectWriter)] = []
        try modes.apply(to: staging, fsyncEach: fsyncEach) { (path, directory, regular) throws(SystemError) in
            // The files of each directory are hashed together, on every processor.
            let hashes = try Digest.sha256(ofFiles: regular.map(\.name), in: directory, limit: policy.maxFileBytes, early: early)
            for ((name, status), sha256) in zip(regular, hashes) {
                let inner = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
                let shown = EscapedName(inner).text
                var file = JSONObjectWriter()
                file.add("entry", shown)
                file.add("entry_size", status.size)
                if let sha256 { file.add("sha256", sha256) }
                file.add("classes", strings: (classes[shown] ?? []).sorted().map(\.rawValue))
                if let type = types[shown] { file.add("mime_type", type) }
                files.append((inner.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init), file))
            }
        }
        // Depth first, each directory's names in byte order, as the entry is listed.
        files.sort { $0.path.lexicographicallyPrecedes($1.path) { $0.lexicographicallyPrecedes($1) } }
        json.add("outbox_files", objects: files.map(\.file))
        try staging.open(name, [.writeOnly, .create, .exclusive, .noFollow], mode: modes.fileMode).closeAfter { (fd) throws(SystemError) in
            try modes.set(on: fd)
            try fd.writeAll(Array((json.text + "\n").utf8))
            if fsyncEach { try fd.sync() }
        }
        if fsyncEach { try staging.sync() }
    }
}
