/// How keyed-archive (NSKeyedArchiver) drops are judged.
public struct KeyedSettings: Sendable, Equatable {
    /// Archived class names accepted for a Memo record, each mapped explicitly.
    public var classNames: [String] = ["Memo"]
    /// The drop's size limit, checked before decoding.
    public var maxBytes: Int64 = 1 << 20
    /// Items in an array of memos.
    public var maxItems: Int64 = 1000
    /// A memo's text, in UTF-16 code units.
    public var maxTextUnits: Int64 = 4096
    /// Keep the original archive beside the rendered JSON.
    public var keepOriginal = false

    public init() {}
}
