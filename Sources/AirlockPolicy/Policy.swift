/// The archive policy in force for one drop: every limit of the archive policy table in the README.
/// Limits are inclusive.
public struct Policy: Sendable, Equatable {
    public var maxEntries: Int = 1000
    public var maxFileBytes: Int64 = 20 * 1024 * 1024
    public var maxTotalBytes: Int64 = 100 * 1024 * 1024
    public var maxDropBytes: Int64 = 100 * 1024 * 1024
    public var maxComponentBytes: Int = 255
    public var maxPathBytes: Int = 1024
    public var maxDepth: Int = 32
    public var maxRatio: Int64 = 100
    public var ratioMinBytes: Int64 = 1024 * 1024
    /// Files 0600 and directories 0700 instead of 0644 and 0755.
    public var privateModes: Bool = false

    public init() {}

    public var fileMode: UInt32 { privateModes ? 0o600 : 0o644 }

    /// The mode a decoder child creates every staged file with, and the only one
    /// the supervisor's audit admits. The supervisor asks for the outbox's file
    /// mode, so that what passes the audit needs no fchmod; 0600 unless asked.
    /// Staging is private (its parent, the state directory, is 0700), so a file
    /// that has its final mode there exposes nothing before the commit.
    public var stagedFileMode: UInt32 = 0o600
    /// The mode a decoder child creates every staged directory with (the outbox's
    /// directory mode when the supervisor asks); 0700 unless asked.
    public var stagedDirectoryMode: UInt32 = 0o700

    /// Whether `mode` may be a staged file's mode: within the outbox's bounds,
    /// 0644 at most and keeping the owner's 0600.
    public static func admitsStagedFileMode(_ mode: UInt32) -> Bool { mode & ~0o644 == 0 && mode & 0o600 == 0o600 }
    /// Whether `mode` may be a staged directory's mode: 0755 at most, keeping the owner's 0700.
    public static func admitsStagedDirectoryMode(_ mode: UInt32) -> Bool { mode & ~0o755 == 0 && mode & 0o700 == 0o700 }
    public var directoryMode: UInt32 { privateModes ? 0o700 : 0o755 }

    /// True when an entry of `size` bytes from `compressed` stored bytes breaks the ratio rule.
    public func breaksRatio(size: Int64, compressed: Int64) -> Bool {
        guard size > ratioMinBytes else { return false }
        let (limit, overflow) = max(compressed, 0).multipliedReportingOverflow(by: maxRatio)
        return !overflow && size > limit
    }
}
