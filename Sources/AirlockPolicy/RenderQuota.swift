/// The quotas on files a decoder renders whole before writing them (a keyed
/// archive's memo JSON, the kept original): the same per-file, total and ratio
/// rules, checked in the same order, as the archive scan applies chunk by chunk
/// to extracted files. A rendered file's compressed size is the whole drop it
/// was rendered from.
///
/// `inspect` and `run` both judge the rendered bytes with it before anything is
/// written, so they reach the same verdict, and the kernel's file-size limit
/// never has to stop a write.
public struct RenderQuota: Sendable {
    public let policy: Policy
    public private(set) var total: Int64 = 0

    public init(policy: Policy) {
        self.policy = policy
    }

    /// Counts a file of `size` bytes rendered from `source` bytes of the drop, or
    /// returns the rule it breaks (and counts nothing).
    public mutating func admit(_ name: [UInt8], size: Int64, source: Int64) -> Violation? {
        if size > policy.maxFileBytes {
            return Violation(.fileTooLarge, "renders to \(size) bytes, over the \(policy.maxFileBytes)-byte limit", entry: name)
        }
        if size > policy.maxTotalBytes - total {
            return Violation(.totalTooLarge, "renders to more than \(policy.maxTotalBytes) bytes in all")
        }
        if policy.breaksRatio(size: size, compressed: source) {
            return Violation(.ratioTooHigh, "renders to \(size) bytes from a \(source)-byte drop, past \(policy.maxRatio)x", entry: name)
        }
        total += size
        return nil
    }
}

extension Policy {
    /// The most a rendered drop of `dropSize` bytes can write, by the quotas
    /// `RenderQuota` applies: one rendered file within the per-file, total and
    /// ratio limits, and the original beside it when it is kept; all within the
    /// total. The supervisor asks the filesystem for this much room.
    public func renderedBound(dropSize: Int64, keepsOriginal: Bool) -> Int64 {
        let (ratioLimit, overflow) = max(dropSize, 0).multipliedReportingOverflow(by: maxRatio)
        let ratioBound = overflow ? Int64.max : max(ratioLimit, ratioMinBytes)
        let rendered = min(maxFileBytes, maxTotalBytes, ratioBound)
        let original = keepsOriginal ? min(max(dropSize, 0), maxFileBytes) : 0
        let (sum, sumOverflow) = rendered.addingReportingOverflow(original)
        return sumOverflow ? maxTotalBytes : min(sum, maxTotalBytes)
    }
}
