import AirlockPolicy

/// One numeric key of airlock.json: where it lives, the values a person would
/// set, and how it reaches the configuration. Parsing, validation, the file
/// `airlock init` writes and the README's table all follow from this one list,
/// and every piece of arithmetic done on a setting is safe within its range.
public struct NumericSetting: Sendable {
    public let section: String
    public let key: String
    /// Inclusive; checked when the file is read, at start and on every reload.
    public let range: ClosedRange<Int64>
    /// The range in words, as the README and the example configuration say it.
    public let bounds: String
    /// Whether the string `"auto"` stands for "no value" (for `watch.workers`, twice the number of cores, at most 8 more than the cores).
    public let acceptsAuto: Bool
    let read: @Sendable (Configuration) -> Int64?
    let write: @Sendable (inout Configuration, Int64?) -> Void

    public var name: String { section + "." + key }

    init(_ section: String, _ key: String, _ range: ClosedRange<Int64>, _ bounds: String, acceptsAuto: Bool = false,
         read: @escaping @Sendable (Configuration) -> Int64?, write: @escaping @Sendable (inout Configuration, Int64?) -> Void) {
        self.section = section
        self.key = key
        self.range = range
        self.bounds = bounds
        self.acceptsAuto = acceptsAuto
        self.read = read
        self.write = write
    }

    /// The setting's value in `configuration` (nil: `"auto"`).
    public func value(in configuration: Configuration) -> Int64? { read(configuration) }
}

extension Configuration {
    static let tebibyte: Int64 = 1 << 40

    /// Every numeric setting, section by section, in the order the file lists them.
    public static let numericSettings: [NumericSetting] = policySettings + decoderSettings + keyedSettings
        + scanSettings + watchSettings + journalSettings + receiptSettings + metricsSettings + publishSettings

    private static let policySettings: [NumericSetting] = [
        NumericSetting("policy", "max_entries", 1...1_000_000, "1 to 1000000",
                       read: { Int64($0.policy.maxEntries) }, write: { $0.policy.maxEntries = Int($1!) }),
        NumericSetting("policy", "max_file_bytes", 1...tebibyte, "1 to 1 TiB",
                       read: { $0.policy.maxFileBytes }, write: { $0.policy.maxFileBytes = $1! }),
        NumericSetting("policy", "max_total_bytes", 1...tebibyte, "1 to 1 TiB",
                       read: { $0.policy.maxTotalBytes }, write: { $0.policy.maxTotalBytes = $1! }),
        NumericSetting("policy", "max_drop_bytes", 1...tebibyte, "1 to 1 TiB",
                       read: { $0.policy.maxDropBytes }, write: { $0.policy.maxDropBytes = $1! }),
        // A component longer than NAME_MAX could not be created anyway.
        NumericSetting("policy", "max_component_bytes", 1...255, "1 to 255",
                       read: { Int64($0.policy.maxComponentBytes) }, write: { $0.policy.maxComponentBytes = Int($1!) }),
        NumericSetting("policy", "max_path_bytes", 1...4096, "1 to 4096",
                       read: { Int64($0.policy.maxPathBytes) }, write: { $0.policy.maxPathBytes = Int($1!) }),
        NumericSetting("policy", "max_depth", 1...255, "1 to 255",
                       read: { Int64($0.policy.maxDepth) }, write: { $0.policy.maxDepth = Int($1!) }),
        NumericSetting("policy", "max_ratio", 1...1_000_000, "1 to 1000000",
                       read: { $0.policy.maxRatio }, write: { $0.policy.maxRatio = $1! }),
        NumericSetting("policy", "ratio_min_bytes", 1...tebibyte, "1 to 1 TiB",
                       read: { $0.policy.ratioMinBytes }, write: { $0.policy.ratioMinBytes = $1! }),
    ]

    private static let decoderSettings: [NumericSetting] = [
        NumericSetting("decoder", "timeout_seconds", 1...86_400, "1 to 86400 (a day)",
                       read: { $0.decoderTimeoutSeconds }, write: { $0.decoderTimeoutSeconds = $1! }),
        // Below 256 MiB libarchive's readers and the child's own start-up fail.
        NumericSetting("decoder", "address_space_bytes", (256 << 20)...tebibyte, "256 MiB to 1 TiB",
                       read: { $0.decoderAddressSpaceBytes }, write: { $0.decoderAddressSpaceBytes = $1! }),
        NumericSetting("decoder", "cpu_seconds", 1...86_400, "1 to 86400 (a day)",
                       read: { $0.decoderCPUSeconds }, write: { $0.decoderCPUSeconds = $1! }),
        // The child needs a handful of descriptors for its inherited ones and libarchive.
        NumericSetting("decoder", "open_files", 16...4096, "16 to 4096",
                       read: { $0.decoderOpenFiles }, write: { $0.decoderOpenFiles = $1! }),
    ]

    private static let keyedSettings: [NumericSetting] = [
        NumericSetting("keyed", "max_bytes", 1...(256 << 20), "1 to 256 MiB",
                       read: { $0.keyed.maxBytes }, write: { $0.keyed.maxBytes = $1! }),
        NumericSetting("keyed", "max_items", 1...1_000_000, "1 to 1000000",
                       read: { $0.keyed.maxItems }, write: { $0.keyed.maxItems = $1! }),
        NumericSetting("keyed", "max_text_units", 1...1_048_576, "1 to 1048576",
                       read: { $0.keyed.maxTextUnits }, write: { $0.keyed.maxTextUnits = $1! }),
    ]

    private static let watchSettings: [NumericSetting] = [
        NumericSetting("watch", "settle_milliseconds", 1...3_600_000, "1 to 3600000 (an hour)",
                       read: { $0.watch.settleMilliseconds }, write: { $0.watch.settleMilliseconds = $1! }),
        NumericSetting("watch", "max_wait_seconds", 1...604_800, "1 to 604800 (a week)",
                       read: { $0.watch.maxWaitSeconds }, write: { $0.watch.maxWaitSeconds = $1! }),
        NumericSetting("watch", "rescan_seconds", 1...86_400, "1 to 86400 (a day)",
                       read: { $0.watch.rescanSeconds }, write: { $0.watch.rescanSeconds = $1! }),
        NumericSetting("watch", "workers", 1...1024, "1 to 1024, or \"auto\"", acceptsAuto: true,
                       read: { $0.watch.workers }, write: { $0.watch.workers = $1 }),
        NumericSetting("watch", "queue_limit", 1...100_000, "1 to 100000",
                       read: { $0.watch.queueLimit }, write: { $0.watch.queueLimit = $1! }),
        NumericSetting("watch", "grace_seconds", 1...3600, "1 to 3600 (an hour)",
                       read: { $0.watch.graceSeconds }, write: { $0.watch.graceSeconds = $1! }),
        NumericSetting("watch", "retry_max_seconds", 1...86_400, "1 to 86400 (a day)",
                       read: { $0.watch.retryMaxSeconds }, write: { $0.watch.retryMaxSeconds = $1! }),
        NumericSetting("watch", "abandoned_remove_seconds", 0...31_536_000, "0 (never) to 31536000 (a year)",
                       read: { $0.watch.abandonedRemoveSeconds }, write: { $0.watch.abandonedRemoveSeconds = $1! }),
        NumericSetting("watch", "poll_seconds", 1...3600, "1 to 3600 (an hour)",
                       read: { $0.watch.pollSeconds }, write: { $0.watch.pollSeconds = $1! }),
    ]

    private static let journalSettings: [NumericSetting] = [
        // Readers hold a whole journal file in memory.
        NumericSetting("journal", "max_bytes", 1...(1 << 30), "1 to 1 GiB",
                       read: { $0.journalMaxBytes }, write: { $0.journalMaxBytes = $1! }),
        NumericSetting("journal", "keep", 1...100, "1 to 100",
                       read: { Int64($0.journalKeep) }, write: { $0.journalKeep = Int($1!) }),
    ]

    private static let receiptSettings: [NumericSetting] = [
        NumericSetting("receipts", "max_age_seconds", 60...31_536_000, "60 to 31536000 (a year)",
                       read: { $0.receipts.maxAgeSeconds }, write: { $0.receipts.maxAgeSeconds = $1! }),
    ]

    private static let metricsSettings: [NumericSetting] = [
        NumericSetting("metrics", "interval_seconds", 1...86_400, "1 to 86400 (a day)",
                       read: { $0.metricsIntervalSeconds }, write: { $0.metricsIntervalSeconds = $1! }),
    ]

    /// Only read when `publish.nats` is there; its section is the nested object.
    private static let publishSettings: [NumericSetting] = [
        // JetStream keeps message ids for this long; a republished outcome within it is dropped.
        NumericSetting("publish.nats", "duplicate_window_seconds", 1...604_800, "1 to 604800 (a week)",
                       read: { $0.publish?.duplicateWindowSeconds }, write: { $0.publish?.duplicateWindowSeconds = $1! }),
    ]

    /// The longest `root` or `metrics.path` accepted: PATH_MAX less its NUL.
    public static let maxPathSettingBytes = 4095
    /// `keyed.class_names`: at most this many names, each at most `maxClassNameBytes`.
    public static let maxClassNames = 64
    public static let maxClassNameBytes = 255
}
