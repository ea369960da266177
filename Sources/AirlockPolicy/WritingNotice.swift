/// A line a decoder child writes to its result pipe, ahead of its verdict, each
/// time it has written another `step` bytes or more to staging: `{"writing":N}`,
/// N being the bytes since its last such notice.
///
/// It lets the supervisor start putting those pages on disk (a syncfs on
/// another thread) while the child goes on decoding, so that the commit's own
/// syncfs finds little left to wait for. A hint and nothing more: a syncfs
/// makes nothing visible and changes no byte, the commit's syncfs is what makes
/// the drop durable, and the supervisor believes no more of these bytes than the
/// policy lets a drop write. A child that lies costs itself its head start.
public enum WritingNotice {
    /// How much is written between notices: a syncfs for less would cost a
    /// drop of many small files more than it saves.
    public static let step: Int64 = 4 << 20

    public static let prefix = Array(#"{"writing":"#.utf8)

    /// The notice for `bytes`, newline included.
    public static func line(bytes: Int64) -> [UInt8] {
        prefix + Array(String(bytes).utf8) + Array("}\n".utf8)
    }

    /// The bytes a notice line (without its newline) names; nil when it is not
    /// exactly one notice with 1 to 18 decimal digits.
    public static func bytes(in line: ArraySlice<UInt8>) -> Int64? {
        noticeNumber(in: line, after: prefix)
    }
}
