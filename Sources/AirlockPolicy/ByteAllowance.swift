/// The quotas extracted data is held to as it arrives, one chunk at a time: the
/// per-file limit, the entry's own declared size, the total over the drop and
/// the ratio to the entry's compressed size, checked in that order before a
/// chunk is written.
///
/// Every comparison subtracts what has been counted from a limit it has not
/// passed, so no sum of archive-declared or counted sizes can overflow, even
/// with limits at `Int64.max`.
public struct ByteAllowance: Sendable {
    /// The rule a chunk would break.
    public enum Breach: Equatable, Sendable {
        /// The entry would pass the per-file limit.
        case fileTooLarge
        /// The entry would hold more data than its header declares.
        case pastDeclaredSize
        /// The drop's entries would pass the total limit.
        case totalTooLarge
        /// The entry would expand past the ratio to its compressed size.
        case ratioTooHigh
    }

    public let policy: Policy
    /// The bytes admitted so far, over every entry.
    public private(set) var total: Int64 = 0

    public init(policy: Policy) {
        self.policy = policy
    }

    /// Counts `count` more bytes of an entry that already holds `written`, or
    /// returns the first rule they break (and counts nothing).
    ///
    /// - Parameters:
    ///   - declared: the size the entry's header declares, if any.
    ///   - compressed: the entry's compressed size, if the format says.
    public mutating func admit(_ count: Int64, after written: Int64, declared: Int64?, compressed: Int64?) -> Breach? {
        precondition(count >= 0 && written >= 0, "chunk and entry sizes are counts")
        if written > policy.maxFileBytes || count > policy.maxFileBytes - written { return .fileTooLarge }
        if let declared, written > declared || count > declared - written { return .pastDeclaredSize }
        if count > policy.maxTotalBytes - total { return .totalTooLarge }
        // Within the file limit, so the sum is at most maxFileBytes.
        if let compressed, policy.breaksRatio(size: written + count, compressed: compressed) { return .ratioTooHigh }
        total += count
        return nil
    }
}
