/// Why a drop was rejected. The raw values are stable: reports, events, tests and
/// operators' scripts depend on them.
public enum Reason: String, CaseIterable, Sendable, Codable {
    case unsafePath = "unsafe-path"
    case unsupportedEntryType = "unsupported-entry-type"
    case duplicatePath = "duplicate-path"
    case pathConflict = "path-conflict"
    case nameCollision = "name-collision"
    case nameTooLong = "name-too-long"
    case tooDeep = "too-deep"
    case tooManyEntries = "too-many-entries"
    case fileTooLarge = "file-too-large"
    case totalTooLarge = "total-too-large"
    case ratioTooHigh = "ratio-too-high"
    case corruptArchive = "corrupt-archive"
    case encryptedEntry = "encrypted-entry"
    case unsupportedFormat = "unsupported-format"
    case dropTooLarge = "drop-too-large"
    case notRegularFile = "not-regular-file"
    case changedDuringIngest = "changed-during-ingest"
    case wrongRootClass = "wrong-root-class"
    case unknownClass = "unknown-class"
    case unsupportedSchema = "unsupported-schema"
    case invalidField = "invalid-field"
    case decoderFailed = "decoder-failed"
    /// The claimed drop's own mode or owner forbid airlock to open it.
    case unreadableDrop = "unreadable-drop"
    /// A file's detected type is denied, or not allowed, by the content policy.
    case disallowedType = "disallowed-type"
    /// A file's extension names a type its content contradicts.
    case typeMismatch = "type-mismatch"
    /// The virus scanner found a signature in a file.
    case malwareFound = "malware-found"

    /// Precedence when one drop breaks several rules; lower wins. Whole-archive
    /// findings come first because they do not depend on which entry was read
    /// first, then per-entry findings, ties broken by the entry's bytes, so the
    /// verdict is the same whatever the entry order.
    public var precedence: Int {
        switch self {
        case .unsupportedFormat: return 0
        case .corruptArchive: return 1
        case .tooManyEntries: return 2
        case .totalTooLarge: return 3
        case .unsafePath: return 10
        case .nameTooLong: return 11
        case .tooDeep: return 12
        case .unsupportedEntryType: return 13
        case .encryptedEntry: return 14
        case .duplicatePath: return 15
        case .pathConflict: return 16
        case .nameCollision: return 17
        case .fileTooLarge: return 18
        case .ratioTooHigh: return 19
        // Content is judged only when the archive's own rules found nothing, so
        // these rank after every one of them.
        case .disallowedType: return 20
        case .typeMismatch: return 21
        case .malwareFound: return 22
        default: return 30
        }
    }
}

/// One broken rule: the reason, a human detail, and the offending entry's raw name
/// and index where there is one.
public struct Violation: Sendable, Equatable {
    public let reason: Reason
    public let detail: String
    public let entry: [UInt8]?
    public let index: Int?
    /// For a conflict or a collision, the other entry involved, raw.
    public var other: [UInt8]?

    public init(_ reason: Reason, _ detail: String, entry: [UInt8]? = nil, index: Int? = nil) {
        self.reason = reason
        self.detail = detail
        self.entry = entry
        self.index = index
    }

    /// True when `self` should be reported rather than `other`.
    public func outranks(_ other: Violation) -> Bool {
        if reason.precedence != other.reason.precedence { return reason.precedence < other.reason.precedence }
        switch (entry, other.entry) {
        case let (a?, b?) where a == b:
            // The same entry in two conflicts: the smaller other name, so the report
            // does not depend on which conflict the scan met first.
            guard let mine = self.other, let theirs = other.other else { return self.other == nil && other.other != nil }
            return mine.lexicographicallyPrecedes(theirs)
        case let (a?, b?): return a.lexicographicallyPrecedes(b)
        case (nil, _?): return true
        default: return false
        }
    }
}

/// Collects every violation a scan finds and keeps the one to report.
public struct Findings: Sendable {
    public private(set) var worst: Violation?

    public init() {}

    public var isClean: Bool { worst == nil }

    public mutating func record(_ violation: Violation) {
        if let current = worst, !violation.outranks(current) { return }
        worst = violation
    }
}
