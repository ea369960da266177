import AirlockChild
import AirlockPolicy
import AirlockSystem
import Foundation

/// airlock.json, decoded strictly: an unknown key, a wrong type, or a number outside
/// its setting's range is an error naming the key. Every key is optional; keys
/// that begin with `//` are comments.
public struct Configuration: Sendable, Equatable {
    public enum SyncMethod: String, Sendable, Codable, CaseIterable {
        /// One syncfs(2) on the staging directory's filesystem before the commit.
        case syncfs
        /// fsync(2) on every file and directory written.
        case fsync
    }

    /// The root this configuration describes; used with `--config FILE`.
    public var root: String?
    public var policy = Policy()
    public var decoderTimeoutSeconds: Int64 = 120
    public var decoderAddressSpaceBytes: Int64 = 1 << 30
    public var decoderCPUSeconds: Int64 = 60
    public var decoderOpenFiles: Int64 = 64
    /// Whether decoding stops while the kernel offers Landlock or seccomp and something
    /// refuses them ("required"), or goes on with what is granted ("best-effort").
    public var decoderConfinementRequired = true
    public var sync: SyncMethod = .syncfs

    /// The audit journal rotates past this size, keeping this many old files.
    public var journalMaxBytes: Int64 = 16 << 20
    public var journalKeep: Int = 5
    /// Prometheus text-format metrics, written atomically by the daemon; empty: none.
    /// Outside the private state directory, so a textfile collector can read it.
    public var metricsPath: String = "metrics/airlock.prom"
    public var metricsIntervalSeconds: Int64 = 15

    /// Outbox entries' modes ("policy": policy.file_mode's) and group ("": airlock's own).
    public var outboxFileMode: FileMode?
    public var outboxDirectoryMode: FileMode?
    public var outboxGroup = ""
    public var outboxGroupID: GroupID?
    /// The groups whose acknowledgements (`acks/GROUP/ID`) let `outbox sweep` remove
    /// an entry, and whether every one of them must acknowledge it or any one.
    public var acknowledgingGroups: [String] = []
    public var removeWhenAllAcknowledge = true
    public var outboxModes: OutboxModes {
        OutboxModes(fileMode: outboxFileMode ?? FileMode(policy.fileMode), directoryMode: outboxDirectoryMode ?? FileMode(policy.directoryMode),
                    group: outboxGroupID)
    }
    /// `policy` as a decoder child is given it and its staging is audited by: the
    /// child creates staged entries with the outbox's modes, so that the audit sets
    /// no mode on what passes (only the group, where one is configured).
    public var decoderPolicy: Policy {
        var decoder = policy
        let modes = outboxModes
        decoder.stagedFileMode = UInt32(modes.fileMode)
        decoder.stagedDirectoryMode = UInt32(modes.directoryMode)
        return decoder
    }

    /// Producers' receipts.
    public var receipts = ReceiptSettings()

    /// Keyed-archive (NSKeyedArchiver) drops.
    public var keyed = KeyedSettings()

    /// Type detection and the rules on types; virus scanning.
    public var content = ContentSettings()
    public var scan = ScanSettings()
    /// The encodings of names that are not UTF-8.
    public var legacyNames = LegacyNameSettings()
    /// The kinds of drop decoded at all.
    public var formats = FormatList()

    /// `publish.nats`: nil, the default, publishes nothing.
    public var publish: PublishSettings?

    /// The watcher (`airlock run` without `--once`).
    public var watch = WatchSettings()
    /// A fleet of instances on one root (`cluster`).
    public var cluster = ClusterSettings()

    public struct WatchSettings: Sendable, Equatable {
        /// Quiet time after the last event for a name before it is considered.
        public var settleMilliseconds: Int64 = 500
        /// A name that never settles is processed as it is after this long.
        public var maxWaitSeconds: Int64 = 600
        /// Full inbox rescan, for anything events missed.
        public var rescanSeconds: Int64 = 60
        /// Decoder children at once; nil means twice the number of cores, at most 8 more than the cores.
        public var workers: Int64? = nil
        /// Claimed drops waiting for a worker; beyond it drops wait in the inbox.
        public var queueLimit: Int64 = 64
        /// How long in-flight drops may finish after SIGTERM or SIGINT.
        public var graceSeconds: Int64 = 10
        /// Longest wait between retries of a deferred drop.
        public var retryMaxSeconds: Int64 = 300
        /// Names left alone until renamed: uploads in progress. Matched case-insensitively.
        /// Setting it replaces the defaults; `ignoreAlso` adds to them.
        public var ignore = TemporaryNames.defaultPatterns
        /// More names to leave alone, on top of `ignore`.
        public var ignoreAlso: [String] = []
        /// How the watcher knows a drop is complete.
        public var completion = Completion.lease
        /// Temporary names older than this are removed as abandoned uploads; 0: never.
        public var abandonedRemoveSeconds: Int64 = 0
        /// On a shared root: the inbox listing and the other instances' locks, this often.
        public var pollSeconds: Int64 = 2

        /// `ignore` and `ignoreAlso` together: every name that is an upload in progress.
        public var ignorePatterns: [String] { ignore + ignoreAlso }

        public init() {}
    }

    public init() {}

    /// Decoder children at once: `watch.workers`, or twice the number of cores,
    /// at most 8 more than the cores.
    ///
    /// More than one per core, because a worker spends much of a small drop
    /// waiting rather than computing: for its child to exit, for the syncfs and
    /// the fsyncs of its commit. With one worker per core a core idles through
    /// each of those waits, and two workers' syncs seldom come close enough
    /// together to be shared. At most 8 more, since each worker keeps a child
    /// waiting and a few extra ones already cover the waits.
    public var workerCount: Int {
        let cores = Int64(Processors.online)
        return Int(watch.workers ?? cores + min(cores, 8))
    }

    /// Worker threads for `decoding` decoder slots: four per slot, at most 64
    /// more than the slots, so that while the drops of some workers wait for
    /// their syncs (and share them) others decode (see DecodeSlots). One slot
    /// keeps one thread: drops one at a time, as `watch.workers: 1` asks.
    public static func workerThreads(decoding slots: Int) -> Int {
        slots <= 1 ? slots : slots + min(3 * slots, 64)
    }

    /// The limits a decoder child sets on itself; the file-size limit is one byte
    /// over the per-file quota, so an over-quota write fails in the kernel too.
    public var decoderLimits: DecoderLimits {
        DecoderLimits(addressSpaceBytes: decoderAddressSpaceBytes, cpuSeconds: decoderCPUSeconds,
                      openFiles: decoderOpenFiles, fileSizeBytes: policy.maxFileBytes + 1,
                      requiresConfinement: decoderConfinementRequired)
    }

    /// The sections of airlock.json, in the order the file lists them.
    public static let sections = ["policy", "decoder", "keyed", "content", "scan", "zip", "tar", "watch", "journal", "outbox", "receipts", "metrics", "commit", "cluster"]

    /// Decodes and validates the bytes of an airlock.json: every numeric setting
    /// against its range in `numericSettings`, the others by their own rules.
    public init(json: Data) throws(ConfigurationError) {
        try ConfigurationText.check(json)
        let value: JSONValue
        do {
            value = JSONValue(try JSONSerialization.jsonObject(with: json, options: []))
        } catch {
            throw ConfigurationError("not valid JSON: \((error as NSError).localizedDescription)")
        }
        var reader = try ObjectReader(value, path: "")
        root = try reader.string(.root)
        if let root { try Configuration.checkPathText(root, .root) }
        formats = try FormatList(try reader.stringArray(.formats))
        for name in Configuration.sections {
            guard var section = try reader.object(name) else { continue }
            for setting in Configuration.numericSettings where setting.section == name {
                if let found = try section.integer(setting) { setting.write(&self, found) }
            }
            try readOtherKeys(of: name, &section)
            try section.finish()
        }
        if var section = try reader.object("publish") {
            guard var nats = try section.object("nats") else { throw ConfigurationError("publish: must hold a \"nats\" object") }
            publish = try PublishSettings(&nats)
            for setting in Configuration.numericSettings where setting.section == "publish.nats" {
                if let found = try nats.integer(setting) { setting.write(&self, found) }
            }
            try nats.finish()
            try section.finish()
        }
        try reader.finish()
    }

    /// The keys of a section that are not numbers.
    private mutating func readOtherKeys(of section: String, _ reader: inout ObjectReader) throws(ConfigurationError) {
        switch section {
        case "policy":
            guard let mode = try reader.choice(.policyFileMode) else { return }
            policy.privateModes = mode == "0600"
        case "decoder":
            guard let mode = try reader.choice(.decoderConfinement) else { return }
            decoderConfinementRequired = mode == "required"
        case "outbox":
            try readOutboxKeys(&reader)
        case "keyed":
            if let names = try reader.stringArray(.keyedClassNames) {
                guard !names.isEmpty, names.count <= Configuration.maxClassNames,
                      !names.contains(where: { $0.isEmpty || $0.contains("\0") || $0.utf8.count > Configuration.maxClassNameBytes }) else {
                    throw ConfigurationError(.keyedClassNames, "must list 1 to \(Configuration.maxClassNames) non-empty class names of at most \(Configuration.maxClassNameBytes) bytes")
                }
                keyed.classNames = names
            }
            keyed.keepOriginal = try reader.bool(.keyedKeepOriginal) ?? keyed.keepOriginal
        case "content":
            try readContentKeys(&reader)
        case "scan":
            try readScanKeys(&reader)
        case "zip", "tar":
            try legacyNames.read(section, &reader)
        case "metrics":
            guard let path = try reader.string(.metricsPath) else { return }
            try Configuration.checkPathText(path, .metricsPath)
            if !path.hasPrefix("/") && path.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) {
                throw ConfigurationError(.metricsPath, "a relative path may not hold '.' or '..' components")
            }
            metricsPath = path
        case "receipts":
            receipts.enabled = try reader.bool(.receiptsEnabled) ?? receipts.enabled
        case "watch":
            if let patterns = try reader.stringArray(.watchIgnore) { watch.ignore = try TemporaryNames.validated(patterns, .watchIgnore) }
            if let patterns = try reader.stringArray(.watchIgnoreAlso) {
                watch.ignoreAlso = try TemporaryNames.validated(patterns, .watchIgnoreAlso)
            }
            if let rule = try reader.choice(.watchCompletion) { watch.completion = Completion(rawValue: rule)! }
        case "cluster":
            try cluster.read(&reader)
        case "commit":
            guard let method = try reader.choice(.commitSync) else { return }
            // The choices are SyncMethod's own raw values.
            sync = SyncMethod(rawValue: method)!
        default:
            break
        }
    }

    /// A path setting's text: no NUL, at most PATH_MAX less one bytes.
    private static func checkPathText(_ path: String, _ setting: SettingDefinition) throws(ConfigurationError) {
        guard !path.contains("\0"), path.utf8.count <= maxPathSettingBytes else {
            throw ConfigurationError(setting, "must be a path of at most \(maxPathSettingBytes) bytes without NUL")
        }
    }

    /// Reads the configuration file at `path` as ConfigurationSource does (a
    /// regular file, no link, owned by its directory's owner or root), as whoever
    /// this process is: a superuser becomes the owner first (RootAccess).
    public static func load(path: String) throws(ConfigurationError) -> Configuration {
        try ConfigurationSource.locate(path).read()
    }

    /// Every key with its value, as `airlock init` writes it; each numeric key is
    /// preceded by a `"// key"` comment giving its range. The keys and their
    /// order come from `numericSettings` and `otherSettings`.
    public func rendered() -> String {
        var lines = ["{"]
        lines += Configuration.otherSettings.filter { $0.path.section == nil }.compactMap { setting in
            setting.value(in: self).map { "  \(JSONObjectWriter.quote(setting.name)): \($0)," }
        }
        for (index, section) in Configuration.sections.enumerated() {
            let entries = renderedKeys(of: section)
            lines.append("  \"\(section)\": {")
            lines += entries.enumerated().map { "    " + $1 + ($0 == entries.count - 1 ? "" : ",") }
            lines.append("  }" + (index == Configuration.sections.count - 1 && publish == nil ? "" : ","))
        }
        if publish != nil {
            let entries = renderedKeys(of: "publish.nats")
            lines += ["  \"publish\": {", "    \"nats\": {"]
            lines += entries.enumerated().map { "      " + $1 + ($0 == entries.count - 1 ? "" : ",") }
            lines += ["    }", "  }"]
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The lines of one section: its numeric keys, each after its range as a
    /// comment, then the others, in the tables' order.
    private func renderedKeys(of section: String) -> [String] {
        var numbers: [String] = [], others: [String] = []
        for setting in Configuration.numericSettings where setting.section == section {
            numbers.append("\(JSONObjectWriter.quote("// " + setting.key)): \(JSONObjectWriter.quote(setting.bounds))")
            numbers.append("\(JSONObjectWriter.quote(setting.key)): \(setting.value(in: self).map(String.init) ?? "\"auto\"")")
        }
        for setting in Configuration.otherSettings where setting.path.section == section {
            if let value = setting.value(in: self) { others.append("\(JSONObjectWriter.quote(setting.path.key)): \(value)") }
        }
        // publish.nats has always listed its one number last.
        return section == "publish.nats" ? others + numbers : numbers + others
    }
}

/// A configuration problem, worded for the operator; exit status 78, or 77 when
/// the file is refused for who owns it or a link on its way (`refusesAccess`).
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let refusesAccess: Bool
    public init(_ message: String, refusesAccess: Bool = false) {
        self.message = message
        self.refusesAccess = refusesAccess
    }
    public var description: String { message }
}

/// Walks one JSON object, taking keys one by one and refusing leftovers.
struct ObjectReader {
    private var remaining: [String: JSONValue]
    private let path: String

    init(_ value: JSONValue, path: String) throws(ConfigurationError) {
        guard case .object(let object) = value else {
            throw ConfigurationError("\(path.isEmpty ? "the configuration" : path): must be a JSON object")
        }
        // Keys beginning with "//" are comments (the example configuration gives
        // each setting's range that way).
        remaining = object.filter { !$0.key.hasPrefix("//") }
        self.path = path
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func object(_ key: String) throws(ConfigurationError) -> ObjectReader? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        return try ObjectReader(value, path: name(key))
    }

    mutating func stringArray(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        guard case .array(let list) = value else { throw ConfigurationError("\(name(key)): must be an array of strings") }
        var strings: [String] = []
        for case .string(let text) in list { strings.append(text) }
        guard strings.count == list.count else { throw ConfigurationError("\(name(key)): must be an array of strings") }
        return strings
    }

    mutating func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        guard case .boolean(let flag) = value else { throw ConfigurationError("\(name(key)): must be true or false") }
        return flag
    }

    mutating func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        guard case .string(let text) = value else { throw ConfigurationError("\(name(key)): must be a string") }
        return text
    }

    /// The value of a numeric setting: nil when absent, `.some(nil)` for `"auto"`
    /// where the setting takes it. Anything but an integer within the setting's
    /// range is an error giving the key, the value and the range.
    mutating func integer(_ setting: NumericSetting) throws(ConfigurationError) -> Int64?? {
        guard let value = remaining.removeValue(forKey: setting.key) else { return nil }
        let range = "\(setting.range.lowerBound) to \(setting.range.upperBound)\(setting.acceptsAuto ? ", or \"auto\"" : "")"
        if setting.acceptsAuto, case .string("auto") = value { return .some(nil) }
        guard case .number(let number) = value else {
            throw ConfigurationError("\(name(setting.key)): must be an integer from \(range), got \(ObjectReader.describe(value))")
        }
        let double = number.doubleValue
        guard double.isFinite, double.rounded() == double else {
            throw ConfigurationError("\(name(setting.key)): must be an integer from \(range), got \(number)")
        }
        // The range is far inside Int64, so comparing as a Double first cannot misjudge.
        guard double >= Double(setting.range.lowerBound), double <= Double(setting.range.upperBound),
              setting.range.contains(number.int64Value) else {
            let shown = abs(double) < 1e18 ? String(Int64(double)) : "\(double)"
            throw ConfigurationError("\(name(setting.key)): \(shown) is outside the allowed range, \(range)")
        }
        return .some(number.int64Value)
    }

    /// A JSON value that is not a number, named for a message.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return JSONObjectWriter.quote(text)
        case .boolean: return "a boolean"
        case .number(let number): return "\(number)"
        case .array: return "an array"
        case .object: return "an object"
        case .null: return "null"
        }
    }

    func finish() throws(ConfigurationError) {
        if let unknown = remaining.keys.sorted().first {
            throw ConfigurationError("\(name(unknown)): unknown key")
        }
    }
}
