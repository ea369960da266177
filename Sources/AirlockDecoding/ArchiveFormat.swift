/// The archive formats airlock decodes, told apart by their first bytes only.
public enum ArchiveFormat: String, Sendable, CaseIterable {
    case zip
    case tar
    case tarGzip = "tar.gz"
    case tarBzip2 = "tar.bz2"
    case tarXz = "tar.xz"
    case tarZstd = "tar.zst"
    case sevenZip = "7z"

    /// How many leading bytes `sniff` wants (the ustar magic sits at offset 257).
    public static let sniffLength = 512

    /// Identifies the format from a drop's first bytes, never from its name.
    /// A compressed stream is taken to hold a tar; the decoder checks that it does.
    public static func sniff(_ prefix: [UInt8]) -> ArchiveFormat? {
        func starts(_ magic: [UInt8]) -> Bool { prefix.count >= magic.count && Array(prefix.prefix(magic.count)) == magic }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return .sevenZip }
        if starts([0x1F, 0x8B]) { return .tarGzip }
        if starts([0x42, 0x5A, 0x68]) { return .tarBzip2 }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .tarXz }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return .tarZstd }
        if prefix.count >= 262 && Array(prefix[257..<262]) == Array("ustar".utf8) { return .tar }
        return nil
    }

    /// How many trailing bytes `endsLikeZip` wants: an end record and the longest comment.
    public static let zipTailLength = 22 + 65535

    /// Whether a drop's last bytes end with a ZIP end record whose comment reaches
    /// the end of the file. Asked only of a drop whose first bytes named no format:
    /// such a drop is a ZIP behind a self-extractor stub or padding, which Python's
    /// zipfile and libarchive would both read. airlock refuses it, and identifying
    /// it as a ZIP lets the directory parser say why (the bytes before the first
    /// entry) instead of calling it an unknown format.
    public static func endsLikeZip(_ tail: [UInt8]) -> Bool {
        guard tail.count >= 22 else { return false }
        return (0...(tail.count - 22)).contains { position in
            tail[position] == 0x50 && tail[position + 1] == 0x4B && tail[position + 2] == 0x05 && tail[position + 3] == 0x06
                && position + 22 + (Int(tail[position + 20]) | Int(tail[position + 21]) << 8) == tail.count
        }
    }
}
