import AirlockSystem

/// Inbox names that are uploads still in progress, left alone until renamed:
/// `watch.ignore`, shell patterns matched case-insensitively. The defaults cover
/// dotfiles, `*.part` (also WinSCP's `*.PART`), WinSCP's `*.filepart`, `*.tmp`
/// and editor backups (`*~`).
public enum TemporaryNames {
    public static let defaultPatterns = [".*", "*.part", "*.filepart", "*.tmp", "*~"]
    public static let maxPatterns = 64
    public static let maxPatternBytes = 255

    /// Whether `name` matches one of `patterns`.
    public static func matches(_ name: [UInt8], _ patterns: [String]) -> Bool {
        patterns.contains { NamePattern($0).matches(name) }
    }

    /// `patterns` as `watch.ignore` accepts them: at most `maxPatterns`, each
    /// non-empty, without `/` or NUL, at most `maxPatternBytes` bytes. An empty
    /// list is allowed: then every name is a drop.
    static func validated(_ patterns: [String], _ key: String) throws(ConfigurationError) -> [String] {
        guard patterns.count <= maxPatterns,
              !patterns.contains(where: { $0.isEmpty || $0.contains("/") || $0.contains("\0") || $0.utf8.count > maxPatternBytes }) else {
            throw ConfigurationError("\(key): must list at most \(maxPatterns) shell patterns of 1 to \(maxPatternBytes) bytes without '/' or NUL")
        }
        return patterns
    }

    /// The defaults a `watch.ignore` list leaves out, which uploads in progress
    /// then lose: rsync's `.name.XXXXXX`, mod_dav's `.davfs.tmp…`, `name.part`.
    public static func droppedDefaults(_ patterns: [String]) -> [String] {
        defaultPatterns.filter { !patterns.contains($0) }
    }

    /// The warning for a `watch.ignore` that leaves defaults out, or nil.
    public static func droppedDefaultsWarning(_ patterns: [String]) -> String? {
        let dropped = droppedDefaults(patterns)
        guard !dropped.isEmpty else { return nil }
        return "watch.ignore replaces the default patterns, and leaves out \(dropped.joined(separator: " ")): "
            + "uploads in progress under such names (rsync's .name.XXXXXX, mod_dav's and WinSCP's temporary files) "
            + "would be claimed half-written; list them again, or put only the added patterns in watch.ignore_also"
    }
}

/// How the watcher knows a name in the inbox is a complete drop (`watch.completion`).
public enum Completion: String, Sendable, CaseIterable {
    /// Nobody holds it open for writing: a read lease (CAP_LEASE for producers' files).
    case lease
    /// Only a rename (or link) into the inbox says a drop is complete; no leases.
    /// Names found by listing are taken once their size and times stood still
    /// for the settle interval.
    case renamed
}
