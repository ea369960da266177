import AirlockText

/// The one message a decoder child writes to its result pipe, and the one shape
/// the supervisor reads it in: the child encodes it with `jsonText` (it does not
/// load Foundation), the supervisor decodes it with any `Decoder`. Both go through
/// `Key`, so each field's name is written once.
///
/// The message is versioned: a child and a supervisor from different builds can
/// meet during an upgrade, and a verdict whose fields may mean something else is
/// refused rather than half-believed.
public struct VerdictMessage: Sendable, Equatable {
    /// The version this build writes and the only one it reads.
    /// 2: an accepted verdict carries every staged file's content classes.
    /// 3: writing notices (`WritingNotice`) may come ahead of the verdict; a
    /// supervisor reading 2 would take one for the verdict's start. A child and a
    /// supervisor of different versions defer the drop (`TakenNotice`).
    public static let currentVersion: Int64 = 3

    /// Escaped entry name and MIME type, for the content rules; nil when types were not detected.
    public var types: [DetectedType]?
    /// The files with at least one content class, sorted by entry; nil from a
    /// child that did not classify (a verdict other than acceptance, or a fault).
    public var classes: [ClassifiedEntry]?
    public var outcome: Outcome
    /// What confinement the child was granted; nil only from a test fault that reports before confining.
    public var confinement: ConfinementFields?

    public init(_ outcome: Outcome, types: [DetectedType]? = nil, classes: [ClassifiedEntry]? = nil,
                confinement: ConfinementFields? = nil) {
        self.outcome = outcome
        self.types = types
        self.classes = classes
        self.confinement = confinement
    }

    /// Records what a failing child had written, on a rejection or a failure.
    public mutating func noteBytesWritten(_ bytes: Int64) {
        switch outcome {
        case .rejected(var rejected):
            rejected.bytesWritten = bytes
            outcome = .rejected(rejected)
        case .failed(var failed):
            failed.bytesWritten = bytes
            outcome = .failed(failed)
        default:
            break
        }
    }

    public enum Outcome: Sendable, Equatable {
        case accepted(Accepted)
        case rejected(Rejected)
        /// A failed system call (`"error"`): the supervisor decides defer or reject from its errno.
        case failed(Failed)
        /// Confinement is required and something the kernel offers was refused; the drop was not read.
        case unconfined(detail: String)
        /// The child could not load what it needs to judge (the magic database).
        case unavailable(detail: String)
        /// `--probe`: what confinement and limits a child gets, for `doctor` and start-up.
        case probe(Probe)
        /// `--list`: the archive's headers, for `quarantine contents`.
        case listing(Listing)

        /// The `verdict` field's value.
        public var name: String {
            switch self {
            case .accepted: return "accepted"
            case .rejected: return "rejected"
            case .failed: return "error"
            case .unconfined: return "unconfined"
            case .unavailable: return "unavailable"
            case .probe: return "probe"
            case .listing: return "listing"
            }
        }
    }

    public struct Accepted: Sendable, Equatable {
        public var files: Int64
        public var directories: Int64
        public var entries: Int64
        public var bytesWritten: Int64

        public init(files: Int64, directories: Int64, entries: Int64, bytesWritten: Int64) {
            self.files = files
            self.directories = directories
            self.entries = entries
            self.bytesWritten = bytesWritten
        }
    }

    public struct Rejected: Sendable, Equatable {
        /// A reason code; the supervisor checks it is one a decoder may give.
        public var reason: String
        public var detail: String
        /// Escaped entry names.
        public var entry: String?
        public var otherEntry: String?
        public var index: Int64?
        /// Entries read before the verdict; nil when the child did not count them.
        public var entries: Int64?
        public var bytesWritten: Int64?

        /// The rejection of `violation`, the worst finding of a scan that read
        /// `entries` entries and wrote `bytesWritten` bytes; names escaped.
        public init(_ violation: Violation, entries: Int64?, bytesWritten: Int64?) {
            self.init(reason: violation.reason.rawValue, detail: violation.detail, entry: violation.entry.map { EscapedName($0).text },
                      otherEntry: violation.other.map { EscapedName($0).text }, index: violation.index.map(Int64.init),
                      entries: entries, bytesWritten: bytesWritten)
        }

        public init(reason: String, detail: String, entry: String? = nil, otherEntry: String? = nil, index: Int64? = nil,
                    entries: Int64? = nil, bytesWritten: Int64? = nil) {
            self.reason = reason
            self.detail = detail
            self.entry = entry
            self.otherEntry = otherEntry
            self.index = index
            self.entries = entries
            self.bytesWritten = bytesWritten
        }
    }

    public struct Failed: Sendable, Equatable {
        /// "reading-drop" or "writing-staging".
        public var stage: String
        public var errno: Int32
        public var detail: String
        public var bytesWritten: Int64?

        public init(stage: String, errno: Int32, detail: String, bytesWritten: Int64? = nil) {
            self.stage = stage
            self.errno = errno
            self.detail = detail
            self.bytesWritten = bytesWritten
        }
    }

    public struct Probe: Sendable, Equatable {
        public var confineMicroseconds: Int64
        public var addressSpaceBytes: Int64
        public var cpuSeconds: Int64
        public var openFiles: Int64
        public var fileSizeBytes: Int64
        /// "required" or "best-effort".
        public var confinement: String

        public init(confineMicroseconds: Int64, addressSpaceBytes: Int64, cpuSeconds: Int64, openFiles: Int64,
                    fileSizeBytes: Int64, confinement: String) {
            self.confineMicroseconds = confineMicroseconds
            self.addressSpaceBytes = addressSpaceBytes
            self.cpuSeconds = cpuSeconds
            self.openFiles = openFiles
            self.fileSizeBytes = fileSizeBytes
            self.confinement = confinement
        }
    }

    public struct Listing: Sendable, Equatable {
        /// The headers read; nil when the archive could not be opened at all.
        public var headers: Headers?
        /// Why the listing stops early, if it does.
        public var detail: String?

        public init(headers: Headers?, detail: String?) {
            self.headers = headers
            self.detail = detail
        }

        public struct Headers: Sendable, Equatable {
            /// The entries that fit the message; `count` goes on.
            public var entries: [ListedEntry]
            public var count: Int64
            public var truncated: Bool

            public init(entries: [ListedEntry], count: Int64, truncated: Bool) {
                self.entries = entries
                self.count = count
                self.truncated = truncated
            }
        }
    }

    public struct ConfinementFields: Sendable, Equatable {
        public var landlockABI: Int64
        /// "in-force", "not-offered" or "refused".
        public var landlockState: String
        public var seccompState: String
        /// Why something is missing; nil when nothing is.
        public var problems: String?

        public init(landlockABI: Int64, landlockState: String, seccompState: String, problems: String?) {
            self.landlockABI = landlockABI
            self.landlockState = landlockState
            self.seccompState = seccompState
            self.problems = problems
        }
    }
}

/// One entry's detected type, as the child reports it.
public struct DetectedType: Sendable, Equatable {
    /// The escaped entry name.
    public var entry: String
    public var type: String

    public init(entry: String, type: String) {
        self.entry = entry
        self.type = type
    }
}

/// One archive entry as its header describes it, for `quarantine contents`.
public struct ListedEntry: Sendable, Equatable {
    /// The escaped entry name.
    public var entry: String
    public var entryType: String
    public var entrySize: Int64?
    /// The escaped link target of a symbolic or hard link.
    public var linkTarget: String?
    public var encrypted: Bool

    public init(entry: String, entryType: String, entrySize: Int64? = nil, linkTarget: String? = nil, encrypted: Bool = false) {
        self.entry = entry
        self.entryType = entryType
        self.entrySize = entrySize
        self.linkTarget = linkTarget
        self.encrypted = encrypted
    }
}
