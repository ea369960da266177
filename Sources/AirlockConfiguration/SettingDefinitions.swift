import AirlockPolicy

/// One key of airlock.json that is not a number: its name, the type of value
/// it takes, the values accepted, what it does, and its value in a
/// configuration. With `NumericSetting` this is the whole list of keys: the
/// parser reads each choice's values from it, `airlock init` writes every key
/// from it, airlock.json(5) is generated from it, and tests hold the example
/// configuration and the README's table to it.
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
    /// What the setting does, in one line of Markdown, as the README's table and
    /// airlock.json(5) say it.
    public let doc: String
    /// The value in a configuration, as JSON text the way `airlock init` writes
    /// it; nil where the configuration leaves it out (`root` unset, no `publish.nats`).
    let value: @Sendable (Configuration) -> String?

    /// The section the key lives in (nil at the top level; `publish.nats` for the
    /// nested one) and the key itself.
    public var path: (section: String?, key: String) {
        guard let dot = name.lastIndex(of: ".") else { return (nil, name) }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    /// The setting's value in `configuration`, as JSON text (nil: left out).
    public func value(in configuration: Configuration) -> String? { value(configuration) }

    init(_ name: String, _ kind: Kind, _ bounds: String? = nil, doc: String, value: @escaping @Sendable (Configuration) -> String?) {
        self.name = name
        self.kind = kind
        self.doc = doc
        self.value = value
        switch kind {
        case .boolean: self.bounds = bounds ?? "`true`, `false`"
        case .choice(let values): self.bounds = bounds ?? values.map { "`\"\($0)\"`" }.joined(separator: ", ")
        case .text, .list: self.bounds = bounds!
        }
    }
}

/// A string as JSON text.
private func quote(_ text: String) -> String { JSONObjectWriter.quote(text) }

/// Strings as a JSON array on one line.
private func list(_ strings: [String]) -> String { "[" + strings.map(JSONObjectWriter.quote).joined(separator: ", ") + "]" }

extension Configuration {
    /// Every key that is not a number, in the order the file lists them.
    public static let otherSettings: [SettingDefinition] = [
        .root, .formats, .policyFileMode, .decoderConfinement, .keyedClassNames,
        .keyedKeepOriginal, .detectTypes, .magicDatabase, .mimeTypes, .contentAllow,
        .contentDeny, .extensionMustMatch, .denyClasses, .clamdSocket, .zipLegacyEncoding,
        .tarLegacyEncoding, .watchIgnore, .watchIgnoreAlso, .watchCompletion, .outboxFileMode,
        .outboxDirectoryMode, .outboxGroup, .acknowledgingGroups, .removeWhen, .receiptsEnabled,
        .metricsPath, .commitSync, .clusterShared, .clusterInstance, .clusterSettledWrites, .natsServers, .natsStream, .natsSubjectPrefix,
        .natsInstance, .natsCreateStream, .natsTLSCAFile, .natsTLSCertFile, .natsTLSKeyFile,
        .natsCredsFile, .natsUserPasswordFile,
    ]
}

extension ObjectReader {
    // A setting's value, read under its own key in the section being read;
    // errors name it as `section.key`.

    mutating func bool(_ setting: SettingDefinition) throws(ConfigurationError) -> Bool? { try bool(setting.path.key) }

    mutating func string(_ setting: SettingDefinition) throws(ConfigurationError) -> String? { try string(setting.path.key) }

    mutating func stringArray(_ setting: SettingDefinition) throws(ConfigurationError) -> [String]? {
        try stringArray(setting.path.key)
    }

    /// The value of the choice setting `setting`, nil when absent; any other
    /// string is an error that lists the values it takes.
    mutating func choice(_ setting: SettingDefinition) throws(ConfigurationError) -> String? {
        guard case .choice(let values) = setting.kind else { preconditionFailure("\(setting.name) is not a choice setting") }
        guard let value = try string(setting.path.key) else { return nil }
        guard values.contains(value) else {
            let listed = values.map { "\"\($0)\"" }
            let words = listed.dropLast().joined(separator: ", ") + " or " + listed.last!
            throw ConfigurationError("\(setting.name): must be \(words), got \"\(value)\"")
        }
        return value
    }
}

extension ConfigurationError {
    /// A problem with the value of `setting`: its name, then `problem`.
    package init(_ setting: SettingDefinition, _ problem: String) {
        self.init(setting.name + ": " + problem)
    }
}

extension SettingDefinition {
    // Each key that is not a number, named once: the parser reads it, its
    // messages name it and `otherSettings` lists it by these names.
    public static let root = SettingDefinition("root", .text, "a path, at most 4095 bytes",
        doc: "the root, used with `--config FILE`",
        value: { $0.root.map(JSONObjectWriter.quote) })
    public static let formats = SettingDefinition("formats", .list, "one or more of `\"zip\"`, `\"tar\"` (with its compressors), `\"7z\"`, `\"keyed\"`, "
        + "`\"rar\"`, `\"iso9660\"`, `\"cab\"`, `\"cpio\"`",
        doc: "the kinds of drop decoded; any other is `unsupported-format`, with a detail naming this key. RAR (4 and 5), ISO 9660 (Rock Ridge, Joliet), CAB and cpio (newc, odc) are read by libarchive in the same confined child under the same rules; libarchive's mtree and raw readers are never offered",
        value: { list($0.formats.enabled) })
    public static let policyFileMode = SettingDefinition("policy.file_mode", .choice(["0644", "0600"]),
        doc: "`\"0644\"` (directories 0755) or `\"0600\"` (directories 0700)",
        value: { quote($0.policy.privateModes ? "0600" : "0644") })
    public static let decoderConfinement = SettingDefinition("decoder.confinement", .choice(["required", "best-effort"]),
        doc: "`\"required\"`: while the kernel offers Landlock or seccomp and something refuses it, no decoder runs and drops wait deferred; `\"best-effort\"`: decode with what is granted (for kernels or managers that cannot grant it)",
        value: { quote($0.decoderConfinementRequired ? "required" : "best-effort") })
    public static let keyedClassNames = SettingDefinition("keyed.class_names", .list, "1 to 64 names of 1 to 255 bytes",
        doc: "archived class names accepted for a Memo record",
        value: { list($0.keyed.classNames) })
    public static let keyedKeepOriginal = SettingDefinition("keyed.keep_original", .boolean,
        doc: "keep the archive beside the JSON as `original.plist`",
        value: { String($0.keyed.keepOriginal) })
    public static let detectTypes = SettingDefinition("content.detect_types", .boolean,
        doc: "name every file's MIME type with libmagic even when no rule needs it (rules naming MIME types run it anyway; see Content)",
        value: { String($0.content.detectTypes) })
    public static let magicDatabase = SettingDefinition("content.magic_database", .text, "an absolute path",
        doc: "libmagic's compiled database (Debian's `libmagic-mgc`)",
        value: { quote($0.content.magicDatabase) })
    public static let mimeTypes = SettingDefinition("content.mime_types", .text, "an absolute path",
        doc: "extension table for `extension_must_match` (Debian's `media-types`)",
        value: { quote($0.content.mimeTypes) })
    public static let contentAllow = SettingDefinition("content.allow", .list, "MIME patterns: `type/subtype`, `type/*`, `*/*`",
        doc: "when not empty, only these types pass",
        value: { list($0.content.policy.allow.map(\.text)) })
    public static let contentDeny = SettingDefinition("content.deny", .list, "MIME patterns",
        doc: "these types never pass (checked before `allow`)",
        value: { list($0.content.policy.deny.map(\.text)) })
    public static let extensionMustMatch = SettingDefinition("content.extension_must_match", .boolean,
        doc: "a file whose extension names a type its content contradicts is rejected",
        value: { String($0.content.extensionMustMatch) })
    public static let denyClasses = SettingDefinition("content.deny_classes", .list, "content classes: " + ContentClass.allCases.map { "`\"\($0.rawValue)\"`" }.joined(separator: ", "),
        doc: "a file of one of these classes is rejected (`disallowed-type`); classes need no libmagic",
        value: { list($0.content.policy.denyClasses.sorted().map(\.rawValue)) })
    public static let clamdSocket = SettingDefinition("scan.clamd_socket", .text, "`\"\"` or an absolute path of at most 107 bytes",
        doc: "clamd's local socket; `\"\"`: no virus scanning",
        value: { quote($0.scan.clamdSocket) })
    public static let zipLegacyEncoding = SettingDefinition("zip.legacy_encoding", .text, "an encoding name glibc's iconv knows (`iconv --list`), no `//` suffix",
        doc: "ZIP names without the UTF-8 flag that are not valid UTF-8 are decoded from it (the ZIP specification says CP437; Windows writes its OEM code page: `\"CP850\"`, `\"CP866\"`, `\"CP932\"`, ...); the decoded name is judged and lands, a rejection quotes the stored bytes in hex",
        value: { quote($0.legacyNames.zipEncoding) })
    public static let tarLegacyEncoding = SettingDefinition("tar.legacy_encoding", .text, "`\"\"` or an encoding name as above",
        doc: "tar names that are not UTF-8 (GNU tar on a Latin-1 system, pax `hdrcharset=BINARY`) are decoded from it; `\"\"`: such a name is `unsafe-path`, with a detail naming this key",
        value: { quote($0.legacyNames.tarEncoding) })
    public static let watchIgnore = SettingDefinition("watch.ignore", .list, "at most 64 shell patterns, each 1 to 255 bytes without `/` (replaces the defaults)",
        doc: "inbox names left alone until renamed (uploads in progress), matched case-insensitively (`x.PART` matches `*.part`); a list replaces the defaults (rsync's `.name.XXXXXX` and mod_dav's `.davfs.tmp…` need `.*`; airlock warns when one is left out), `[]` ignores nothing",
        value: { list($0.watch.ignore) })
    public static let watchIgnoreAlso = SettingDefinition("watch.ignore_also", .list, "at most 64 shell patterns as above, added to `watch.ignore`",
        doc: "more temporary names, keeping the defaults",
        value: { list($0.watch.ignoreAlso) })
    public static let watchCompletion = SettingDefinition("watch.completion", .choice(Completion.allCases.map(\.rawValue)),
        doc: "how a drop is known to be complete: `\"lease\"`, no writer holds it (a read lease, which needs CAP_LEASE: without it `airlock run` exits 77); `\"renamed\"`, only a rename into the inbox completes it, and names found by listing are taken once their size and times stand still (see Watching)",
        value: { quote($0.watch.completion.rawValue) })
    public static let outboxFileMode = SettingDefinition("outbox.file_mode", .text, "octal within `\"0644\"`, keeping `\"0600\"`; `\"policy\"`",
        doc: "mode every file of an outbox entry gets, whatever the umask (`\"policy\"`: `policy.file_mode`'s)",
        value: { quote($0.outboxFileMode.map { "0" + String($0, radix: 8) } ?? "policy") })
    public static let outboxDirectoryMode = SettingDefinition("outbox.directory_mode", .text, "octal within `\"0755\"`, keeping `\"0700\"`; `\"policy\"`",
        doc: "mode every directory of an entry gets (`\"policy\"`: 0755, or 0700 with private modes)",
        value: { quote($0.outboxDirectoryMode.map { "0" + String($0, radix: 8) } ?? "policy") })
    public static let outboxGroup = SettingDefinition("outbox.group", .text, "an existing group airlock belongs to, or `\"\"`",
        doc: "group every entry gets (`\"\"`: airlock's own); the service user must belong to it, and its members may also read the event feed (`airlock events`) and nothing else of `state/`",
        value: { quote($0.outboxGroup) })
    public static let acknowledgingGroups = SettingDefinition("outbox.acknowledging_groups", .list, "at most 16 existing groups airlock belongs to; `[]`: `outbox.group`",
        doc: "the consumer groups whose acknowledgements (`acks/GROUP/ID`) let `outbox sweep` remove an entry",
        value: { list($0.acknowledgingGroups) })
    public static let removeWhen = SettingDefinition("outbox.remove_when", .choice(["all", "any"]),
        doc: "remove an entry once every acknowledging group has acknowledged it, or once any one has",
        value: { quote($0.removeWhenAllAcknowledge ? "all" : "any") })
    public static let receiptsEnabled = SettingDefinition("receipts.enabled", .boolean,
        doc: "a receipt per decided drop for its uploader, `receipts/UID/ID.json` (see Receipts)",
        value: { String($0.receipts.enabled) })
    public static let metricsPath = SettingDefinition("metrics.path", .text, "a path, at most 4095 bytes, not inside `inbox/`, `outbox/`, `quarantine/`, "
        + "`state/claimed/`, `state/staging/` or `state/purging/`, nor a file airlock keeps",
        doc: "Prometheus text file the daemon writes, mode 0644 whatever the umask (relative to the root unless absolute, missing directories beneath the root made 0755; `\"\"` for none)",
        value: { quote($0.metricsPath) })
    public static let commitSync = SettingDefinition("commit.sync", .choice(Configuration.SyncMethod.allCases.map(\.rawValue)),
        doc: "`\"syncfs\"`: a syncfs(2) before the commit's rename and one after it, each shared by the drops waiting then; `\"fsync\"`: fsync every file and directory, and the outbox after the rename",
        value: { quote($0.sync.rawValue) })
    public static let clusterShared = SettingDefinition("cluster.shared", .boolean,
        doc: "the root is on a filesystem other hosts share (CephFS, NFSv4.1): run as an instance of a fleet, list the inbox every `watch.poll_seconds`, take only renamed drops",
        value: { String($0.cluster.shared) })
    public static let clusterInstance = SettingDefinition("cluster.instance", .text, "`\"\"` (the host name) or 1 to 64 bytes of ASCII letters, digits, `.`, `_`, `-`, beginning with a letter or digit",
        doc: "this daemon's instance name (`run --instance` overrides it); set, it makes the daemon an instance of a fleet even on a root that is not shared",
        value: { quote($0.cluster.instance) })
    public static let clusterSettledWrites = SettingDefinition("cluster.settled_writes", .boolean,
        doc: "on a shared root, also take drops written in place once their size and times stood still for a poll interval (no lease reaches other hosts' writers)",
        value: { String($0.cluster.settledWrites) })
    public static let natsServers = SettingDefinition("publish.nats.servers", .list, "1 to 32 URLs `nats://HOST:PORT` or `tls://HOST:PORT`",
        doc: "NATS servers `airlock publish` connects to, tried in turn; required in `publish.nats`",
        value: { $0.publish.map { list($0.servers) } })
    public static let natsStream = SettingDefinition("publish.nats.stream", .text, "a JetStream stream name",
        doc: "the stream the outcomes go to; required in `publish.nats`",
        value: { $0.publish.map { quote($0.stream) } })
    public static let natsSubjectPrefix = SettingDefinition("publish.nats.subject_prefix", .text, "dot-separated tokens of letters, digits, `-`, `_`",
        doc: "subjects are `PREFIX.INSTANCE.EVENT` (default `\"airlock\"`)",
        value: { $0.publish.map { quote($0.subjectPrefix) } })
    public static let natsInstance = SettingDefinition("publish.nats.instance", .text, "`\"\"` (the host name) or a name of at most 255 bytes",
        doc: "this instance's name, mapped to one subject token (see \"Publishing to NATS JetStream\")",
        value: { $0.publish.map { quote($0.instance) } })
    public static let natsCreateStream = SettingDefinition("publish.nats.create_stream", .boolean,
        doc: "create the stream (limits retention, file storage, `PREFIX.>`, the duplicate window) when missing (default `false`: expect it)",
        value: { $0.publish.map { String($0.createStream) } })
    public static let natsTLSCAFile = SettingDefinition("publish.nats.tls_ca_file", .text, "`\"\"` or an absolute path",
        doc: "PEM CA that signed the servers' certificates (TLS is on with it or with `tls://` URLs)",
        value: { $0.publish.map { quote($0.tlsCAFile) } })
    public static let natsTLSCertFile = SettingDefinition("publish.nats.tls_cert_file", .text, "`\"\"` or an absolute path",
        doc: "client certificate, when the server verifies clients (with `tls_key_file`)",
        value: { $0.publish.map { quote($0.tlsCertFile) } })
    public static let natsTLSKeyFile = SettingDefinition("publish.nats.tls_key_file", .text, "`\"\"` or an absolute path",
        doc: "the client certificate's key",
        value: { $0.publish.map { quote($0.tlsKeyFile) } })
    public static let natsCredsFile = SettingDefinition("publish.nats.creds_file", .text, "`\"\"` or an absolute path",
        doc: "NATS credentials file (user JWT and nkey seed, as `nsc` writes it)",
        value: { $0.publish.map { quote($0.credsFile) } })
    public static let natsUserPasswordFile = SettingDefinition("publish.nats.user_password_file", .text, "`\"\"` or an absolute path",
        doc: "a file whose first line is `USER:PASSWORD` (not with `creds_file`)",
        value: { $0.publish.map { quote($0.userPasswordFile) } })
}
