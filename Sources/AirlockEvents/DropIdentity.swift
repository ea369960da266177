import AirlockText

/// Which drop a verdict is about, as it was claimed: the fields every record of
/// the verdict repeats (the event line, the journal record, the report, the
/// manifest), carried as one value and given to each record's constructor, so
/// that none copies them one by one.
public struct DropIdentity: Sendable, Equatable {
    /// The claim's id, which names its quarantine entry.
    public let id: String
    /// The name it had in the inbox, raw.
    public let name: [UInt8]
    /// Its size, once it is known to be a regular file.
    public var size: Int64?
    /// Its SHA-256, once it was read.
    public var sha256: String?
    /// Who owned it when it was claimed.
    public var uploader: Uploader?
    /// When its processing began (RFC 3339, UTC): by default, when this value is made.
    public let received: String

    public init(id: String, name: [UInt8], size: Int64? = nil, sha256: String? = nil, uploader: Uploader? = nil,
                received: String? = nil) {
        self.id = id
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.uploader = uploader
        self.received = received ?? timestamp()
    }

    /// The name as reports, events and logs show it.
    public var escapedName: String { EscapedName(name).text }
}
