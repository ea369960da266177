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

    /// The mode a decoder child leaves every staged file with, whatever `fileMode`
    /// is: the supervisor's audit admits no other, and gives each file its outbox
    /// mode once it has judged it.
    public static let stagedFileMode: UInt32 = 0o600
    /// The mode a decoder child leaves every staged directory with.
    public static let stagedDirectoryMode: UInt32 = 0o700
    public var directoryMode: UInt32 { privateModes ? 0o700 : 0o755 }

    /// True when an entry of `size` bytes from `compressed` stored bytes breaks the ratio rule.
    public func breaksRatio(size: Int64, compressed: Int64) -> Bool {
        guard size > ratioMinBytes else { return false }
        let (limit, overflow) = max(compressed, 0).multipliedReportingOverflow(by: maxRatio)
        return !overflow && size > limit
    }
}
