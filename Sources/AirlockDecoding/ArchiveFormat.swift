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
}
