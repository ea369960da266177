import Foundation

/// Which quarantine entries `quarantine list` shows, and which page of them.
public struct QuarantineQuery: Equatable, Sendable {
    /// A reason code, exactly.
    public var reason: String?
    /// The uploader's user name, exactly (as reports record it, escaped).
    public var uploader: String?
    /// Only entries decided at most this long ago.
    public var sinceSeconds: Int64?
    /// A piece of the id, drop name, offending entry or uploader, matched without regard to case.
    public var text: String?
    /// Entries to skip (newest first) before the page begins.
    public var offset = 0
    /// The page's length; nil for every entry.
    public var limit: Int?

    public init(reason: String? = nil, uploader: String? = nil, sinceSeconds: Int64? = nil, text: String? = nil,
                offset: Int = 0, limit: Int? = nil) {
        self.reason = reason
        self.uploader = uploader
        self.sinceSeconds = sinceSeconds
        self.text = text
        self.offset = offset
        self.limit = limit
    }

    /// The oldest `decided_at` shown, as the reports write it, or nil.
    public func cutoff(now: Date = Date()) -> String? {
        sinceSeconds.map { now.addingTimeInterval(-TimeInterval($0)).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
    }

    /// Whether an entry with these fields passes the filters (not the paging).
    public func matches(id: String, decidedAt: String, reason entryReason: String, drop: String, entry: String?,
                        uploader entryUploader: String?, cutoff: String?) -> Bool {
        if let reason, reason != entryReason { return false }
        if let uploader, uploader != entryUploader { return false }
        if let cutoff, decidedAt < cutoff { return false }
        if let text, !text.isEmpty {
            let haystacks = [id, drop, entry ?? "", entryUploader ?? ""]
            if !haystacks.contains(where: { $0.range(of: text, options: [.caseInsensitive]) != nil }) { return false }
        }
        return true
    }
}

/// Which journal records `history` shows.
public struct HistoryQuery: Equatable, Sendable {
    public var id: String?
    /// Only records at most this long old.
    public var sinceSeconds: Int64?
    /// Only the newest this many (after the other filters).
    public var limit: Int?
    /// Counts per hour, event and reason instead of records.
    public var perHour = false

    public init(id: String? = nil, sinceSeconds: Int64? = nil, limit: Int? = nil, perHour: Bool = false) {
        self.id = id
        self.sinceSeconds = sinceSeconds
        self.limit = limit
        self.perHour = perHour
    }
}
