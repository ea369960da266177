import AirlockDecoding
import AirlockPolicy
import Foundation

/// airlock.json, decoded strictly: an unknown key, a wrong type, or a limit that is
/// not a positive integer is an error naming the key. Every key is optional.
public struct Configuration: Sendable, Equatable {
    public enum SyncMethod: String, Sendable, Codable {
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
    public var outboxFileMode: mode_t?
    public var outboxDirectoryMode: mode_t?
    public var outboxGroup = ""
    public var outboxGroupID: gid_t?
    public var outboxModes: OutboxModes {
        OutboxModes(fileMode: outboxFileMode ?? mode_t(policy.fileMode), directoryMode: outboxDirectoryMode ?? mode_t(policy.directoryMode),
                    group: outboxGroupID)
    }

    /// Keyed-archive (NSKeyedArchiver) drops.
    public var keyed = KeyedSettings()

    /// The watcher (`airlock run` without `--once`).
    public var watch = WatchSettings()

    public struct WatchSettings: Sendable, Equatable {
        /// Quiet time after the last event for a name before it is considered.
        public var settleMilliseconds: Int64 = 500
        /// A name that never settles is processed as it is after this long.
        public var maxWaitSeconds: Int64 = 600
        /// Full inbox rescan, for anything events missed.
        public var rescanSeconds: Int64 = 60
        /// Decoder children at once; nil means the number of cores.
        public var workers: Int64? = nil
        /// Claimed drops waiting for a worker; beyond it drops wait in the inbox.
        public var queueLimit: Int64 = 64
        /// How long in-flight drops may finish after SIGTERM or SIGINT.
        public var graceSeconds: Int64 = 10
        /// Longest wait between retries of a deferred drop.
        public var retryMaxSeconds: Int64 = 300

        public init() {}
    }

    public init() {}

    /// Decoder children at once: `watch.workers`, or the number of cores.
    public var workerCount: Int {
        Int(watch.workers ?? Int64(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    }

    /// The limits a decoder child sets on itself; the file-size limit is one byte
    /// over the per-file quota, so an over-quota write fails in the kernel too.
    public var decoderLimits: DecoderLimits {
        DecoderLimits(addressSpaceBytes: decoderAddressSpaceBytes, cpuSeconds: decoderCPUSeconds,
                      openFiles: decoderOpenFiles, fileSizeBytes: policy.maxFileBytes + 1,
                      requiresConfinement: decoderConfinementRequired)
    }

    /// Decodes and validates the bytes of an airlock.json.
    public init(json: Data) throws(ConfigurationError) {
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: json, options: [])
        } catch {
            throw ConfigurationError("not valid JSON: \((error as NSError).localizedDescription)")
        }
        var reader = try ObjectReader(value, path: "")
        root = try reader.string("root")
        if var section = try reader.object("policy") {
            policy.maxEntries = Int(try section.limit("max_entries") ?? Int64(policy.maxEntries))
            policy.maxFileBytes = try section.limit("max_file_bytes") ?? policy.maxFileBytes
            policy.maxTotalBytes = try section.limit("max_total_bytes") ?? policy.maxTotalBytes
            policy.maxDropBytes = try section.limit("max_drop_bytes") ?? policy.maxDropBytes
            policy.maxComponentBytes = Int(try section.limit("max_component_bytes") ?? Int64(policy.maxComponentBytes))
            policy.maxPathBytes = Int(try section.limit("max_path_bytes") ?? Int64(policy.maxPathBytes))
            policy.maxDepth = Int(try section.limit("max_depth") ?? Int64(policy.maxDepth))
            policy.maxRatio = try section.limit("max_ratio") ?? policy.maxRatio
            policy.ratioMinBytes = try section.limit("ratio_min_bytes") ?? policy.ratioMinBytes
            if let mode = try section.string("file_mode") {
                switch mode {
                case "0644": policy.privateModes = false
                case "0600": policy.privateModes = true
                default: throw ConfigurationError("policy.file_mode: must be \"0644\" or \"0600\", got \"\(mode)\"")
                }
            }
            try section.finish()
        }
        if var section = try reader.object("decoder") {
            decoderTimeoutSeconds = try section.limit("timeout_seconds") ?? decoderTimeoutSeconds
            decoderAddressSpaceBytes = try section.limit("address_space_bytes") ?? decoderAddressSpaceBytes
            decoderCPUSeconds = try section.limit("cpu_seconds") ?? decoderCPUSeconds
            decoderOpenFiles = try section.limit("open_files") ?? decoderOpenFiles
            if let mode = try section.string("confinement") {
                guard mode == "required" || mode == "best-effort" else {
                    throw ConfigurationError("decoder.confinement: must be \"required\" or \"best-effort\", got \"\(mode)\"")
                }
                decoderConfinementRequired = mode == "required"
            }
            try section.finish()
        }
        if var section = try reader.object("keyed") {
            if let names = try section.stringArray("class_names") {
                guard !names.isEmpty, !names.contains(where: { $0.isEmpty || $0.contains("\0") }) else {
                    throw ConfigurationError("keyed.class_names: must list at least one non-empty class name")
                }
                keyed.classNames = names
            }
            keyed.maxBytes = try section.limit("max_bytes") ?? keyed.maxBytes
            keyed.maxItems = try section.limit("max_items") ?? keyed.maxItems
            keyed.maxTextUnits = try section.limit("max_text_units") ?? keyed.maxTextUnits
            keyed.keepOriginal = try section.bool("keep_original") ?? keyed.keepOriginal
            try section.finish()
        }
        if var section = try reader.object("watch") {
            watch.settleMilliseconds = try section.limit("settle_milliseconds") ?? watch.settleMilliseconds
            watch.maxWaitSeconds = try section.limit("max_wait_seconds") ?? watch.maxWaitSeconds
            watch.rescanSeconds = try section.limit("rescan_seconds") ?? watch.rescanSeconds
            if let text = try section.peekString("workers") {
                guard text == "auto" else { throw ConfigurationError("watch.workers: must be \"auto\" or a positive integer, got \"\(text)\"") }
                _ = try section.string("workers")
                watch.workers = nil
            } else {
                watch.workers = try section.limit("workers")
            }
            watch.queueLimit = try section.limit("queue_limit") ?? watch.queueLimit
            watch.graceSeconds = try section.limit("grace_seconds") ?? watch.graceSeconds
            watch.retryMaxSeconds = try section.limit("retry_max_seconds") ?? watch.retryMaxSeconds
            try section.finish()
        }
        if var section = try reader.object("journal") {
            journalMaxBytes = try section.limit("max_bytes") ?? journalMaxBytes
            journalKeep = Int(try section.limit("keep") ?? Int64(journalKeep))
            try section.finish()
        }
        if var section = try reader.object("outbox") {
            if let mode = try section.string("file_mode"), mode != "policy" {
                outboxFileMode = try OutboxModes.mode(mode, key: "outbox.file_mode", directory: false)
            }
            if let mode = try section.string("directory_mode"), mode != "policy" {
                outboxDirectoryMode = try OutboxModes.mode(mode, key: "outbox.directory_mode", directory: true)
            }
            if let group = try section.string("group"), !group.isEmpty {
                outboxGroup = group
                outboxGroupID = try OutboxModes.groupID(group)
            }
            try section.finish()
        }
        if var section = try reader.object("metrics") {
            if let path = try section.string("path") { metricsPath = path }
            metricsIntervalSeconds = try section.limit("interval_seconds") ?? metricsIntervalSeconds
            try section.finish()
        }
        if var section = try reader.object("commit") {
            if let method = try section.string("sync") {
                guard let parsed = SyncMethod(rawValue: method) else {
                    throw ConfigurationError("commit.sync: must be \"syncfs\" or \"fsync\", got \"\(method)\"")
                }
                sync = parsed
            }
            try section.finish()
        }
        try reader.finish()
        guard decoderOpenFiles >= 16 else {
            throw ConfigurationError("decoder.open_files: must be at least 16, got \(decoderOpenFiles)")
        }
        guard decoderAddressSpaceBytes >= 256 << 20 else {
            throw ConfigurationError("decoder.address_space_bytes: must be at least 268435456 (256 MiB), got \(decoderAddressSpaceBytes)")
        }
        if !metricsPath.hasPrefix("/") && metricsPath.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) {
            throw ConfigurationError("metrics.path: a relative path may not hold '.' or '..' components")
        }
        guard journalKeep <= 100 else { throw ConfigurationError("journal.keep: must be at most 100, got \(journalKeep)") }
        guard policy.maxDepth <= 255, policy.maxEntries <= 1_000_000 else {
            throw ConfigurationError("policy.max_depth must be at most 255 and policy.max_entries at most 1000000")
        }
    }

    /// Reads the configuration file at `path`.
    public static func load(path: String) throws(ConfigurationError) -> Configuration {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("\(path): cannot be read")
        }
        do {
            return try Configuration(json: data)
        } catch {
            throw ConfigurationError("\(path): \(error.message)")
        }
    }

    /// Every key with its value, as `airlock init` writes it.
    public func rendered() -> String {
        var lines = ["{"]
        if let root { lines.append("  \"root\": \(JSONObjectWriter.quote(root)),") }
        lines += [
            "  \"policy\": {",
            "    \"max_entries\": \(policy.maxEntries),",
            "    \"max_file_bytes\": \(policy.maxFileBytes),",
            "    \"max_total_bytes\": \(policy.maxTotalBytes),",
            "    \"max_drop_bytes\": \(policy.maxDropBytes),",
            "    \"max_component_bytes\": \(policy.maxComponentBytes),",
            "    \"max_path_bytes\": \(policy.maxPathBytes),",
            "    \"max_depth\": \(policy.maxDepth),",
            "    \"max_ratio\": \(policy.maxRatio),",
            "    \"ratio_min_bytes\": \(policy.ratioMinBytes),",
            "    \"file_mode\": \"\(policy.privateModes ? "0600" : "0644")\"",
            "  },",
            "  \"decoder\": {",
            "    \"timeout_seconds\": \(decoderTimeoutSeconds),",
            "    \"address_space_bytes\": \(decoderAddressSpaceBytes),",
            "    \"cpu_seconds\": \(decoderCPUSeconds),",
            "    \"open_files\": \(decoderOpenFiles),",
            "    \"confinement\": \"\(decoderConfinementRequired ? "required" : "best-effort")\"",
            "  },",
            "  \"keyed\": {",
            "    \"class_names\": [\(keyed.classNames.map(JSONObjectWriter.quote).joined(separator: ", "))],",
            "    \"max_bytes\": \(keyed.maxBytes),",
            "    \"max_items\": \(keyed.maxItems),",
            "    \"max_text_units\": \(keyed.maxTextUnits),",
            "    \"keep_original\": \(keyed.keepOriginal)",
            "  },",
            "  \"watch\": {",
            "    \"settle_milliseconds\": \(watch.settleMilliseconds),",
            "    \"max_wait_seconds\": \(watch.maxWaitSeconds),",
            "    \"rescan_seconds\": \(watch.rescanSeconds),",
            "    \"workers\": \(watch.workers.map(String.init) ?? "\"auto\""),",
            "    \"queue_limit\": \(watch.queueLimit),",
            "    \"grace_seconds\": \(watch.graceSeconds),",
            "    \"retry_max_seconds\": \(watch.retryMaxSeconds)",
            "  },",
            "  \"journal\": {",
            "    \"max_bytes\": \(journalMaxBytes),",
            "    \"keep\": \(journalKeep)",
            "  },",
            "  \"outbox\": {",
            "    \"file_mode\": \(JSONObjectWriter.quote(outboxFileMode.map { "0" + String($0, radix: 8) } ?? "policy")),",
            "    \"directory_mode\": \(JSONObjectWriter.quote(outboxDirectoryMode.map { "0" + String($0, radix: 8) } ?? "policy")),",
            "    \"group\": \(JSONObjectWriter.quote(outboxGroup))",
            "  },",
            "  \"metrics\": {",
            "    \"path\": \(JSONObjectWriter.quote(metricsPath)),",
            "    \"interval_seconds\": \(metricsIntervalSeconds)",
            "  },",
            "  \"commit\": {",
            "    \"sync\": \"\(sync.rawValue)\"",
            "  }",
            "}",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A configuration problem, worded for the operator; exit status 78.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Walks one JSON object, taking keys one by one and refusing leftovers.
private struct ObjectReader {
    private var remaining: [String: Any]
    private let path: String

    init(_ value: Any, path: String) throws(ConfigurationError) {
        guard let object = value as? [String: Any] else {
            throw ConfigurationError("\(path.isEmpty ? "the configuration" : path): must be a JSON object")
        }
        remaining = object
        self.path = path
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func object(_ key: String) throws(ConfigurationError) -> ObjectReader? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        return try ObjectReader(value, path: name(key))
    }

    mutating func stringArray(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        guard let list = value as? [Any], let strings = list as? [String], strings.count == list.count else {
            throw ConfigurationError("\(name(key)): must be an array of strings")
        }
        return strings
    }

    mutating func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        guard let number = value as? NSNumber, String(cString: number.objCType) == "c" else {
            throw ConfigurationError("\(name(key)): must be true or false")
        }
        return number.boolValue
    }

    /// The value of `key` if it is a string, without taking it.
    func peekString(_ key: String) throws(ConfigurationError) -> String? {
        remaining[key] as? String
    }

    mutating func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        guard let text = value as? String else { throw ConfigurationError("\(name(key)): must be a string") }
        return text
    }

    /// A positive integer that fits in 63 bits.
    mutating func limit(_ key: String) throws(ConfigurationError) -> Int64? {
        guard let value = remaining.removeValue(forKey: key) else { return nil }
        // JSONSerialization gives NSNumber for numbers and booleans alike (and `is Bool`
        // holds for both on Linux): a boolean is the one whose ObjC type is "c".
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else {
            throw ConfigurationError("\(name(key)): must be a positive integer")
        }
        let double = number.doubleValue
        guard double.rounded() == double, double >= 1, double < 9.2e18 else {
            throw ConfigurationError("\(name(key)): must be a positive integer, got \(number)")
        }
        return number.int64Value
    }

    func finish() throws(ConfigurationError) {
        if let unknown = remaining.keys.sorted().first {
            throw ConfigurationError("\(name(unknown)): unknown key")
        }
    }
}
