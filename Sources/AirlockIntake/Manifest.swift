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

    /// Writes the manifest of `staging` into it: `files` are its regular files as
    /// the audit found, readied and hashed them (see StagingAudit). Synced only
    /// with `fsyncEach` (`commit.sync: "fsync"`), and then staging after it;
    /// otherwise the commit's one syncfs makes staging durable as a whole. The
    /// drop's fields are `drop`'s; each file's type and classes, where `types` and
    /// `classes` (the decoder's) name it.
    static func write(into staging: FileDescriptor, _ drop: DropIdentity, format: String, types: [(entry: String, type: String)]?,
                      classes: [ClassifiedEntry]?, files staged: [StagingAudit.StagedFile], modes: OutboxModes,
                      fsyncEach: Bool) throws(SystemError) {
        var json = JSONObjectWriter()
        json.add("manifest_version", version)
        json.add("time", timestamp())
        json.add("id", drop.id)
        json.add("drop", drop.escapedName)
        json.add("format", format)
        if let size = drop.size { json.add("size", size) }
        if let sha256 = drop.sha256 { json.add("sha256", sha256) }
        drop.uploader?.add(to: &json)
        let types = Dictionary((types ?? []).map { ($0.entry, $0.type) }, uniquingKeysWith: { first, _ in first })
        let classes = Dictionary((classes ?? []).map { ($0.entry, $0.classes) }, uniquingKeysWith: { first, _ in first })
        var files: [(order: [UInt8], file: JSONObjectWriter)] = []
        files.reserveCapacity(staged.count)
        for staged in staged {
            let shown = EscapedName(staged.path).text
            var file = JSONObjectWriter()
            file.add("entry", shown)
            file.add("entry_size", staged.size)
            if let sha256 = staged.sha256 { file.add("sha256", sha256) }
            file.add("classes", strings: (classes[shown] ?? []).sorted().map(\.rawValue))
            if let type = types[shown] { file.add("mime_type", type) }
            // The path with each `/` as NUL, which no name holds: byte order of
            // that is the order of the components, one by one.
            files.append((staged.path.map { $0 == UInt8(ascii: "/") ? 0 : $0 }, file))
        }
        // Depth first, each directory's names in byte order, as the entry is listed.
        files.sort { $0.order.lexicographicallyPrecedes($1.order) }
        json.add("outbox_files", objects: files.map(\.file))
        try staging.open(name, [.writeOnly, .create, .exclusive, .noFollow], mode: modes.fileMode).closeAfter { (fd) throws(SystemError) in
            try modes.set(on: fd)
            try fd.writeAll(Array((json.text + "\n").utf8))
            if fsyncEach { try fd.sync() }
        }
        if fsyncEach { try staging.sync() }
    }
}
