import AirlockPolicy

/// One key of airlock.json that is not a number: its name, the type of value
/// it takes and the values accepted. With `NumericSetting` this is the whole
/// list of keys: the parser reads each choice's values from it, and tests hold
/// the example configuration and the README's table to it.
public struct SettingDefinition: Sendable {
    public enum Kind: Sendable, Equatable {
        case boolean
        /// One of these strings, and nothing else.
        case choice([String])
        /// A string with rules of its own (a path, a mode, a group, an encoding).
        case text
        /// An array of strings.
        case list
    }

    /// `section.key`, or the key alone at the top level.
    public let name: String
    public let kind: Kind
    /// The values accepted, in words, as the README's table gives them.
    public let bounds: String

    /// The section the key lives in (nil at the top level; `publish.nats` for the
    /// nested one) and the key itself.
    public var path: (section: String?, key: String) {
        guard let dot = name.lastIndex(of: ".") else { return (nil, name) }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    init(_ name: String, _ kind: Kind, _ bounds: String? = nil) {
        self.name = name
        self.kind = kind
        switch kind {
        case .boolean: self.bounds = bounds ?? "`true`, `false`"
        case .choice(let values): self.bounds = bounds ?? values.map { "`\"\($0)\"`" }.joined(separator: ", ")
        case .text, .list: self.bounds = bounds!
        }
    }
}

extension Configuration {
    /// Every key that is not a number, in the order the file lists them.
    public static let otherSettings: [SettingDefinition] = [
        SettingDefinition("root", .text, "a path, at most 4095 bytes"),
        SettingDefinition("formats", .list, "one or more of `\"zip\"`, `\"tar\"` (with its compressors), `\"7z\"`, `\"keyed\"`, "
                          + "`\"rar\"`, `\"iso9660\"`, `\"cab\"`, `\"cpio\"`"),
        SettingDefinition("policy.file_mode", .choice(["0644", "0600"])),
        SettingDefinition("decoder.confinement", .choice(["required", "best-effort"])),
        SettingDefinition("keyed.class_names", .list, "1 to 64 names of 1 to 255 bytes"),
        SettingDefinition("keyed.keep_original", .boolean),
        SettingDefinition("content.detect_types", .boolean),
        SettingDefinition("content.magic_database", .text, "an absolute path"),
        SettingDefinition("content.mime_types", .text, "an absolute path"),
        SettingDefinition("content.allow", .list, "MIME patterns: `type/subtype`, `type/*`, `*/*`"),
        SettingDefinition("content.deny", .list, "MIME patterns"),
        SettingDefinition("content.extension_must_match", .boolean),
        SettingDefinition("content.deny_classes", .list, "content classes: " + ContentClass.allCases.map { "`\"\($0.rawValue)\"`" }.joined(separator: ", ")),
        SettingDefinition("scan.clamd_socket", .text, "`\"\"` or an absolute path of at most 107 bytes"),
        SettingDefinition("zip.legacy_encoding", .text, "an encoding name glibc's iconv knows (`iconv --list`), no `//` suffix"),
        SettingDefinition("tar.legacy_encoding", .text, "`\"\"` or an encoding name as above"),
        SettingDefinition("watch.ignore", .list, "at most 64 shell patterns, each 1 to 255 bytes without `/` (replaces the defaults)"),
        SettingDefinition("watch.ignore_also", .list, "at most 64 shell patterns as above, added to `watch.ignore`"),
        SettingDefinition("watch.completion", .choice(Completion.allCases.map(\.rawValue))),
        SettingDefinition("outbox.file_mode", .text, "octal within `\"0644\"`, keeping `\"0600\"`; `\"policy\"`"),
        SettingDefinition("outbox.directory_mode", .text, "octal within `\"0755\"`, keeping `\"0700\"`; `\"policy\"`"),
        SettingDefinition("outbox.group", .text, "an existing group airlock belongs to, or `\"\"`"),
        SettingDefinition("outbox.acknowledging_groups", .list, "at most 16 existing groups airlock belongs to; `[]`: `outbox.group`"),
        SettingDefinition("outbox.remove_when", .choice(["all", "any"])),
        SettingDefinition("receipts.enabled", .boolean),
        SettingDefinition("metrics.path", .text, "a path, at most 4095 bytes, not inside `inbox/`, `outbox/`, `quarantine/`, "
                          + "`state/claimed/`, `state/staging/` or `state/purging/`, nor a file airlock keeps"),
        SettingDefinition("commit.sync", .choice(SyncMethod.allCases.map(\.rawValue))),
        SettingDefinition("cluster.shared", .boolean),
        SettingDefinition("cluster.instance", .text, "`\"\"` (the host name) or 1 to 64 bytes of ASCII letters, digits, `.`, `_`, `-`, "
                          + "beginning with a letter or digit"),
        SettingDefinition("cluster.settled_writes", .boolean),
        SettingDefinition("publish.nats.servers", .list, "1 to 32 URLs `nats://HOST:PORT` or `tls://HOST:PORT`"),
        SettingDefinition("publish.nats.stream", .text, "a JetStream stream name"),
        SettingDefinition("publish.nats.subject_prefix", .text, "dot-separated tokens of letters, digits, `-`, `_`"),
        SettingDefinition("publish.nats.instance", .text, "`\"\"` (the host name) or a name of at most 255 bytes"),
        SettingDefinition("publish.nats.create_stream", .boolean),
        SettingDefinition("publish.nats.tls_ca_file", .text, "`\"\"` or an absolute path"),
        SettingDefinition("publish.nats.tls_cert_file", .text, "`\"\"` or an absolute path"),
        SettingDefinition("publish.nats.tls_key_file", .text, "`\"\"` or an absolute path"),
        SettingDefinition("publish.nats.creds_file", .text, "`\"\"` or an absolute path"),
        SettingDefinition("publish.nats.user_password_file", .text, "`\"\"` or an absolute path"),
    ]

    /// The values a choice setting takes, from `otherSettings`.
    static func choices(_ name: String) -> [String] {
        guard let setting = otherSettings.first(where: { $0.name == name }), case .choice(let values) = setting.kind else {
            preconditionFailure("\(name) is not a choice setting")
        }
        return values
    }
}

extension ObjectReader {
    /// The value of the choice setting `name` (`section.key`), nil when absent;
    /// any other string is an error that lists the values it takes.
    mutating func choice(_ name: String) throws(ConfigurationError) -> String? {
        let values = Configuration.choices(name)
        guard let value = try string(String(name.split(separator: ".").last!)) else { return nil }
        guard values.contains(value) else {
            let listed = values.map { "\"\($0)\"" }
            let words = listed.dropLast().joined(separator: ", ") + " or " + listed.last!
            throw ConfigurationError("\(name): must be \(words), got \"\(value)\"")
        }
        return value
    }
}
