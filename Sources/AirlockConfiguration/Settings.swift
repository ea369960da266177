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
    /// What the setting does, in one line of Markdown, as the README's table and
    /// airlock.json(5) say it.
    public let doc: String
    /// Whether the string `"auto"` stands for "no value" (for `watch.workers`, twice the number of cores, at most 8 more than the cores).
    public let acceptsAuto: Bool
    let read: @Sendable (Configuration) -> Int64?
    let write: @Sendable (inout Configuration, Int64?) -> Void

    public var name: String { section + "." + key }

    init(_ section: String, _ key: String, _ range: ClosedRange<Int64>, _ bounds: String, doc: String, acceptsAuto: Bool = false,
         read: @escaping @Sendable (Configuration) -> Int64?, write: @escaping @Sendable (inout Configuration, Int64?) -> Void) {
        self.section = section
        self.key = key
        self.range = range
        self.bounds = bounds
        self.doc = doc
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
        .maxEntries, .maxFileBytes, .maxTotalBytes, .maxDropBytes, .maxComponentBytes,
        .maxPathBytes, .maxDepth, .maxRatio, .ratioMinBytes,
    ]

    private static let decoderSettings: [NumericSetting] = [
        NumericSetting("decoder", "timeout_seconds", 1...86_400, "1 to 86400 (a day)", doc: "wall-clock limit per drop; the child is killed past it",
                       read: { $0.decoderTimeoutSeconds }, write: { $0.decoderTimeoutSeconds = $1! }),
        // Below 256 MiB libarchive's readers and the child's own start-up fail.
        NumericSetting("decoder", "address_space_bytes", (256 << 20)...tebibyte, "256 MiB to 1 TiB", doc: "`RLIMIT_AS` of the child",
                       read: { $0.decoderAddressSpaceBytes }, write: { $0.decoderAddressSpaceBytes = $1! }),
        NumericSetting("decoder", "cpu_seconds", 1...86_400, "1 to 86400 (a day)", doc: "`RLIMIT_CPU` of the child",
                       read: { $0.decoderCPUSeconds }, write: { $0.decoderCPUSeconds = $1! }),
        // The child needs a handful of descriptors for its inherited ones and libarchive.
        NumericSetting("decoder", "open_files", 16...4096, "16 to 4096", doc: "`RLIMIT_NOFILE` of the child",
                       read: { $0.decoderOpenFiles }, write: { $0.decoderOpenFiles = $1! }),
    ]

    private static let keyedSettings: [NumericSetting] = [
        .keyedMaxBytes,
        .keyedMaxItems,
        NumericSetting("keyed", "max_text_units", 1...1_048_576, "1 to 1048576", doc: "a memo's text, in UTF-16 code units",
                       read: { $0.keyed.maxTextUnits }, write: { $0.keyed.maxTextUnits = $1! }),
    ]

    private static let watchSettings: [NumericSetting] = [
        .watchSettleMilliseconds,
        .watchMaxWaitSeconds,
        NumericSetting("watch", "rescan_seconds", 1...86_400, "1 to 86400 (a day)", doc: "full inbox rescan for anything events missed",
                       read: { $0.watch.rescanSeconds }, write: { $0.watch.rescanSeconds = $1! }),
        NumericSetting("watch", "workers", 1...1024, "1 to 1024, or \"auto\"", doc: "decoder children at once; `\"auto\"` is twice the number of cores, at most 8 more than the cores (a worker waits on its child and its commit's syncs much of the time)", acceptsAuto: true,
                       read: { $0.watch.workers }, write: { $0.watch.workers = $1 }),
        NumericSetting("watch", "queue_limit", 1...100_000, "1 to 100000", doc: "claimed drops waiting for a worker",
                       read: { $0.watch.queueLimit }, write: { $0.watch.queueLimit = $1! }),
        NumericSetting("watch", "grace_seconds", 1...3600, "1 to 3600 (an hour)", doc: "time in-flight drops get after SIGTERM",
                       read: { $0.watch.graceSeconds }, write: { $0.watch.graceSeconds = $1! }),
        NumericSetting("watch", "retry_max_seconds", 1...86_400, "1 to 86400 (a day)", doc: "longest wait between retries of a deferred drop",
                       read: { $0.watch.retryMaxSeconds }, write: { $0.watch.retryMaxSeconds = $1! }),
        .watchAbandonedRemoveSeconds,
        .watchPollSeconds,
    ]

    private static let journalSettings: [NumericSetting] = [
        // Readers hold a whole journal file in memory.
        NumericSetting("journal", "max_bytes", 1...(1 << 30), "1 to 1 GiB", doc: "the audit journal rotates past this size",
                       read: { $0.journalMaxBytes }, write: { $0.journalMaxBytes = $1! }),
        .journalKeep,
    ]

    private static let receiptSettings: [NumericSetting] = [
        .receiptsMaxAgeSeconds,
    ]

    private static let metricsSettings: [NumericSetting] = [
        NumericSetting("metrics", "interval_seconds", 1...86_400, "1 to 86400 (a day)", doc: "how often the daemon rewrites it",
                       read: { $0.metricsIntervalSeconds }, write: { $0.metricsIntervalSeconds = $1! }),
    ]

    /// Only read when `publish.nats` is there; its section is the nested object.
    private static let publishSettings: [NumericSetting] = [
        .natsDuplicateWindowSeconds,
    ]

    /// The longest `root` or `metrics.path` accepted: PATH_MAX less its NUL.
    public static let maxPathSettingBytes = 4095
    /// `keyed.class_names`: at most this many names, each at most `maxClassNameBytes`.
    public static let maxClassNames = 64
    public static let maxClassNameBytes = 255
}

extension NumericSetting {
    // The limits of the archive policy, each named: a quota's rejection names the
    // key of the limit it ran into (QuotaKeys), and a report lists them all.
    public static let maxEntries = NumericSetting("policy", "max_entries", 1...1_000_000, "1 to 1000000", doc: "entries (files and directories) an archive may hold; more is `too-many-entries`",
                                               read: { Int64($0.policy.maxEntries) }, write: { $0.policy.maxEntries = Int($1!) })
    public static let maxFileBytes = NumericSetting("policy", "max_file_bytes", 1...Configuration.tebibyte, "1 to 1 TiB", doc: "bytes written for one file; more is `file-too-large`",
                                               read: { $0.policy.maxFileBytes }, write: { $0.policy.maxFileBytes = $1! })
    public static let maxTotalBytes = NumericSetting("policy", "max_total_bytes", 1...Configuration.tebibyte, "1 to 1 TiB", doc: "bytes written for the whole drop; more is `total-too-large`",
                                               read: { $0.policy.maxTotalBytes }, write: { $0.policy.maxTotalBytes = $1! })
    public static let maxDropBytes = NumericSetting("policy", "max_drop_bytes", 1...Configuration.tebibyte, "1 to 1 TiB", doc: "size of the drop itself, judged on its fstat size before a byte is read; more is `drop-too-large`",
                                               read: { $0.policy.maxDropBytes }, write: { $0.policy.maxDropBytes = $1! })
    // A component longer than NAME_MAX could not be created anyway.
    public static let maxComponentBytes = NumericSetting("policy", "max_component_bytes", 1...255, "1 to 255", doc: "bytes of one component of an entry's name; more is `name-too-long`",
                                               read: { Int64($0.policy.maxComponentBytes) }, write: { $0.policy.maxComponentBytes = Int($1!) })
    public static let maxPathBytes = NumericSetting("policy", "max_path_bytes", 1...4096, "1 to 4096", doc: "bytes of an entry's whole name; more is `name-too-long`",
                                               read: { Int64($0.policy.maxPathBytes) }, write: { $0.policy.maxPathBytes = Int($1!) })
    public static let maxDepth = NumericSetting("policy", "max_depth", 1...255, "1 to 255", doc: "components of an entry's name; more is `too-deep`",
                                               read: { Int64($0.policy.maxDepth) }, write: { $0.policy.maxDepth = Int($1!) })
    public static let maxRatio = NumericSetting("policy", "max_ratio", 1...1_000_000, "1 to 1000000", doc: "how many times its compressed size an entry over `policy.ratio_min_bytes` may expand; more is `ratio-too-high`",
                                               read: { $0.policy.maxRatio }, write: { $0.policy.maxRatio = $1! })
    public static let ratioMinBytes = NumericSetting("policy", "ratio_min_bytes", 1...Configuration.tebibyte, "1 to 1 TiB", doc: "entries up to this size are not held to `policy.max_ratio`",
                                               read: { $0.policy.ratioMinBytes }, write: { $0.policy.ratioMinBytes = $1! })

    /// The keyed-archive limits a rejection names.
    public static let keyedMaxBytes = NumericSetting("keyed", "max_bytes", 1...(256 << 20), "1 to 256 MiB", doc: "size limit of a keyed-archive drop",
                                                   read: { $0.keyed.maxBytes }, write: { $0.keyed.maxBytes = $1! })
    public static let keyedMaxItems = NumericSetting("keyed", "max_items", 1...1_000_000, "1 to 1000000", doc: "memos in an array",
                                                   read: { $0.keyed.maxItems }, write: { $0.keyed.maxItems = $1! })

    // Named because messages elsewhere name them.
    public static let watchSettleMilliseconds = NumericSetting("watch", "settle_milliseconds", 1...3_600_000, "1 to 3600000 (an hour)", doc: "quiet time after a name's last event before it is considered",
        read: { $0.watch.settleMilliseconds }, write: { $0.watch.settleMilliseconds = $1! })
    public static let watchMaxWaitSeconds = NumericSetting("watch", "max_wait_seconds", 1...604_800, "1 to 604800 (a week)", doc: "a name still being written after this long is taken as it is",
        read: { $0.watch.maxWaitSeconds }, write: { $0.watch.maxWaitSeconds = $1! })
    public static let watchAbandonedRemoveSeconds = NumericSetting("watch", "abandoned_remove_seconds", 0...31_536_000, "0 (never) to 31536000 (a year)", doc: "temporary names not written for this long, and open for writing by nobody, are removed",
        read: { $0.watch.abandonedRemoveSeconds }, write: { $0.watch.abandonedRemoveSeconds = $1! })
    public static let watchPollSeconds = NumericSetting("watch", "poll_seconds", 1...3600, "1 to 3600 (an hour)", doc: "an instance of a fleet tries the other instances' locks this often, and on a shared root lists the inbox this often (see \"A fleet on one shared root\")",
        read: { $0.watch.pollSeconds }, write: { $0.watch.pollSeconds = $1! })
    public static let journalKeep = NumericSetting("journal", "keep", 1...100, "1 to 100", doc: "rotated journal files kept",
        read: { Int64($0.journalKeep) }, write: { $0.journalKeep = Int($1!) })
    public static let receiptsMaxAgeSeconds = NumericSetting("receipts", "max_age_seconds", 60...31_536_000, "60 to 31536000 (a year)", doc: "receipts older than this are removed",
        read: { $0.receipts.maxAgeSeconds }, write: { $0.receipts.maxAgeSeconds = $1! })
    // JetStream keeps message ids for this long; a republished outcome within it is dropped.
    public static let natsDuplicateWindowSeconds = NumericSetting("publish.nats", "duplicate_window_seconds", 1...604_800, "1 to 604800 (a week)", doc: "the stream's duplicate window when airlock creates it (default 7200, two hours)",
        read: { $0.publish?.duplicateWindowSeconds }, write: { $0.publish?.duplicateWindowSeconds = $1! })
}
