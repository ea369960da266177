import AirlockPolicy

/// The one request the supervisor makes of a decoder child, whichever program
/// and however the child was started (on its command line, by hand-over, or
/// forked by a template): what to do, with which format, limits and policy.
///
/// One type, one `Key` enum, one encoder and one decoder, like `VerdictMessage`.
/// The message is a list of `key=value` strings (a command line, or the strings a
/// `HandOverMessage` carries), every key exactly once, in `Key` order, the
/// version first. Every field is required: a key missing, repeated, unknown or
/// malformed is refused, never given a default, and so is another version. A
/// refused request is not a verdict: the child exits before it takes its drop,
/// and the supervisor defers the drop (`TakenNotice`); for another version
/// (`refusedStatus`) it also restarts its templates from the programs on disk.
public struct DecoderRequest: Sendable, Equatable {
    /// The version this build writes and the only one it reads.
    /// 4: the request names the modes the child creates staged entries with
    /// (`staged_file_mode`, `staged_directory_mode`, octal); the audit admits
    /// exactly those. A child of version 3 left every entry 0600 and 0700.
    public static let currentVersion: Int64 = 4
    /// EX_PROTOCOL: the exit status of a child given a request of another version.
    public static let refusedStatus: Int32 = 76

    public enum Mode: String, Sendable, CaseIterable {
        /// Decode into staging and give a verdict.
        case decode
        /// Decode, write nothing, give a verdict (`airlock inspect`).
        case inspect
        /// List the archive's entries from their headers (`quarantine contents`).
        case list
        /// Confine, report what was granted, read nothing (`doctor`, start-up).
        case probe
    }

    public var mode: Mode
    /// An archive format's name, `keyed`, or `none` for a probe.
    public var format: String
    /// Whether the child reports its progress through the drop.
    public var progress: Bool
    /// libmagic's database; nil: no type detection.
    public var magicDatabase: String?
    public var limits: DecoderLimits
    public var policy: Policy
    /// How ZIP names without the UTF-8 flag that are not UTF-8 are read.
    public var zipLegacyEncoding: String
    /// How tar names that are not UTF-8 are read; nil: such names are rejected.
    public var tarLegacyEncoding: String?
    /// The keyed decoder's settings (carried to every program, as every field is).
    public var keyed: KeyedSettings

    public init(mode: Mode, format: String, progress: Bool, magicDatabase: String?, limits: DecoderLimits, policy: Policy,
                zipLegacyEncoding: String, tarLegacyEncoding: String?, keyed: KeyedSettings) {
        self.mode = mode
        self.format = format
        self.progress = progress
        self.magicDatabase = magicDatabase
        self.limits = limits
        self.policy = policy
        self.zipLegacyEncoding = zipLegacyEncoding
        self.tarLegacyEncoding = tarLegacyEncoding
        self.keyed = keyed
    }

    /// Every key of the message, in the order it is written.
    public enum Key: String, Sendable, CaseIterable {
        case version = "request_version"
        case mode, format, progress
        case magicDatabase = "magic_database"
        case limitAddressSpace = "limit_as"
        case limitCPU = "limit_cpu"
        case limitOpenFiles = "limit_nofile"
        case limitFileSize = "limit_fsize"
        case confinement
        case maxEntries = "max_entries"
        case maxFileBytes = "max_file_bytes"
        case maxTotalBytes = "max_total_bytes"
        case maxDropBytes = "max_drop_bytes"
        case maxComponentBytes = "max_component_bytes"
        case maxPathBytes = "max_path_bytes"
        case maxDepth = "max_depth"
        case maxRatio = "max_ratio"
        case ratioMinBytes = "ratio_min_bytes"
        case privateModes = "private_modes"
        case stagedFileMode = "staged_file_mode"
        case stagedDirectoryMode = "staged_directory_mode"
        case zipLegacyEncoding = "zip_legacy_encoding"
        case tarLegacyEncoding = "tar_legacy_encoding"
        case keyedClassNames = "keyed_class_names"
        case keyedMaxBytes = "keyed_max_bytes"
        case keyedMaxItems = "keyed_max_items"
        case keyedMaxTextUnits = "keyed_max_text_units"
        case keyedKeepOriginal = "keyed_keep_original"
    }

    /// Why a child refuses a request.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        /// The first string is not `request_version=N` of this build's version (nil: none named).
        case version(Int64?)
        case missing(Key)
        case repeated(Key)
        case unknown(String)
        case malformed(Key, String)

        public var description: String {
            switch self {
            case .version(let version?): return "the request is version \(version); this decoder reads version \(DecoderRequest.acceptedVersion)"
            case .version(nil): return "the request names no version; this decoder reads version \(DecoderRequest.acceptedVersion)"
            case .missing(let key): return "the request lacks \(key.rawValue)"
            case .repeated(let key): return "the request gives \(key.rawValue) twice"
            case .unknown(let key): return "the request has an unknown key \(JSONObjectWriter.quote(key))"
            case .malformed(let key, let value): return "the request's \(key.rawValue) is malformed: \(JSONObjectWriter.quote(value))"
            }
        }
    }

    /// The message: `key=value` for every key, in `Key` order.
    public var encoded: [String] {
        Key.allCases.map { $0.rawValue + "=" + value(for: $0) }
    }

    private func value(for key: Key) -> String {
        switch key {
        case .version: return String(Self.currentVersion)
        case .mode: return mode.rawValue
        case .format: return format
        case .progress: return progress ? "1" : "0"
        case .magicDatabase: return magicDatabase.map(Self.hex) ?? ""
        case .limitAddressSpace: return String(limits.addressSpaceBytes)
        case .limitCPU: return String(limits.cpuSeconds)
        case .limitOpenFiles: return String(limits.openFiles)
        case .limitFileSize: return String(limits.fileSizeBytes)
        case .confinement: return limits.requiresConfinement ? "required" : "best-effort"
        case .maxEntries: return String(policy.maxEntries)
        case .maxFileBytes: return String(policy.maxFileBytes)
        case .maxTotalBytes: return String(policy.maxTotalBytes)
        case .maxDropBytes: return String(policy.maxDropBytes)
        case .maxComponentBytes: return String(policy.maxComponentBytes)
        case .maxPathBytes: return String(policy.maxPathBytes)
        case .maxDepth: return String(policy.maxDepth)
        case .maxRatio: return String(policy.maxRatio)
        case .ratioMinBytes: return String(policy.ratioMinBytes)
        case .privateModes: return policy.privateModes ? "1" : "0"
        case .stagedFileMode: return String(policy.stagedFileMode, radix: 8)
        case .stagedDirectoryMode: return String(policy.stagedDirectoryMode, radix: 8)
        case .zipLegacyEncoding: return Self.hex(zipLegacyEncoding)
        case .tarLegacyEncoding: return tarLegacyEncoding.map(Self.hex) ?? ""
        case .keyedClassNames: return keyed.classNames.map(Self.hex).joined(separator: ",")
        case .keyedMaxBytes: return String(keyed.maxBytes)
        case .keyedMaxItems: return String(keyed.maxItems)
        case .keyedMaxTextUnits: return String(keyed.maxTextUnits)
        case .keyedKeepOriginal: return keyed.keepOriginal ? "1" : "0"
        }
    }

    /// Text values (paths, encoding and class names) travel as the lower-case hex
    /// of their UTF-8: no byte of theirs can be taken for a separator.
    static func hex(_ text: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: text.utf8.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
    }
}
