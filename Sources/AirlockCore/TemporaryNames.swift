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
    static func validated(_ patterns: [String]) throws(ConfigurationError) -> [String] {
        guard patterns.count <= maxPatterns,
              !patterns.contains(where: { $0.isEmpty || $0.contains("/") || $0.contains("\0") || $0.utf8.count > maxPatternBytes }) else {
            throw ConfigurationError("watch.ignore: must list at most \(maxPatterns) shell patterns of 1 to \(maxPatternBytes) bytes without '/' or NUL")
        }
        return patterns
    }
}
