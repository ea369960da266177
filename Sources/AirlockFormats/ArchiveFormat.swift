/// The archive formats airlock decodes, told apart by their first bytes only.
public enum ArchiveFormat: String, Sendable, CaseIterable {
    case zip
    case tar
    case tarGzip = "tar.gz"
    case tarBzip2 = "tar.bz2"
    case tarXz = "tar.xz"
    case tarZstd = "tar.zst"
    case tarLzip = "tar.lz"
    case tarLzma = "tar.lzma"
    case sevenZip = "7z"
    /// Optional formats, read only when the configuration's format list names them.
    case rar
    case iso9660
    case cab
    case cpio

    /// Whether the drop is a tar, plain or compressed.
    package var isTar: Bool {
        switch self {
        case .tar, .tarGzip, .tarBzip2, .tarXz, .tarZstd, .tarLzip, .tarLzma: return true
        case .zip, .sevenZip, .rar, .iso9660, .cab, .cpio: return false
        }
    }

    /// How many leading bytes `sniff` wants (a whole tar header block).
    public static let sniffLength = 512

    /// Identifies the format from a drop's first bytes, never from its name.
    /// A compressed stream is taken to hold a tar; the decoder checks that it does.
    public static func sniff(_ prefix: [UInt8]) -> ArchiveFormat? {
        func starts(_ magic: [UInt8]) -> Bool { prefix.count >= magic.count && Array(prefix.prefix(magic.count)) == magic }
        // Compressed streams first, as libarchive's filters take them before any format.
        if let compressor = sniffCompressor(prefix) { return compressor }
        // A whole ustar header whose checksum matches is a tar, whatever the first
        // member's name starts with ("BZh9 notes", "070701-report.txt", "MSCF"):
        // libarchive's bid for such a header outweighs every magic number below,
        // so taking the magic would decode an honest tar as a format it is not.
        if TarHeader.isChecksummedUstar(prefix) { return .tar }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return .sevenZip }
        if let optional = sniffOptional(prefix) { return optional }
        if TarHeader.starts(prefix) { return .tar }
        if sniffLegacyLzma(prefix) { return .tarLzma }
        return nil
    }

    /// The compressors with a magic number, in every form their streams may
    /// legally start with.
    private static func sniffCompressor(_ prefix: [UInt8]) -> ArchiveFormat? {
        func starts(_ magic: [UInt8]) -> Bool { prefix.count >= magic.count && Array(prefix.prefix(magic.count)) == magic }
        // Every member of a multi-member gzip starts like the first.
        if starts([0x1F, 0x8B]) { return .tarGzip }
        // "BZh", the block size (1 to 9), then a block's magic (the digits of pi) or
        // the stream end's (of sqrt(pi)): libarchive's bzip2 filter asks for all ten
        // bytes, so a tar whose first member is named "BZh91.txt" stays a tar.
        if starts([0x42, 0x5A, 0x68]), prefix.count >= 10, (0x31...0x39).contains(prefix[3]),
           Array(prefix[4..<10]) == [0x31, 0x41, 0x59, 0x26, 0x53, 0x59] || Array(prefix[4..<10]) == [0x17, 0x72, 0x45, 0x38, 0x50, 0x90] {
            return .tarBzip2
        }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .tarXz }
        // A zstd frame, or a skippable frame (magic 0x184D2A50 to 0x184D2A5F) such
        // as the one pzstd writes first to record its frames' sizes.
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return .tarZstd }
        if prefix.count >= 4, prefix[0] & 0xF0 == 0x50, prefix[1] == 0x2A, prefix[2] == 0x4D, prefix[3] == 0x18 { return .tarZstd }
        // "LZIP" and version 1, the only one there is.
        if starts([0x4C, 0x5A, 0x49, 0x50, 0x01]) { return .tarLzip }
        return nil
    }

    /// The legacy `.lzma` format has no magic number; its 13-byte header is
    /// recognised the way liblzma's own format detection does: a valid
    /// properties byte, a dictionary size of 2^n or 2^n + 2^(n-1), and an
    /// uncompressed size that is unknown or under 256 GiB; and, as libarchive
    /// also asks, the range coder's first byte, always zero.
    private static func sniffLegacyLzma(_ prefix: [UInt8]) -> Bool {
        guard prefix.count >= 14, prefix[0] <= (4 * 5 + 4) * 9 + 8, prefix[13] == 0 else { return false }
        let dictionary = prefix[1..<5].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let size = prefix[5..<13].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard dictionary >= 4096 else { return false }
        let high = UInt32(1) << (31 - UInt32(dictionary.leadingZeroBitCount))
        let dictionaryValid = dictionary == high || dictionary == high | (high >> 1) || dictionary == UInt32.max
        return dictionaryValid && (size == UInt64.max || size < 1 << 38)
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
