
/// Free names for a drop, in one place for the outbox and for a release back
/// into the inbox: the name first, then `-2`, `-3`, … before its archive suffix,
/// the stem shortened at a UTF-8 boundary wherever the number would not
/// otherwise fit in a directory entry.
public enum NameCandidates {
    /// NAME_MAX: the longest directory entry Linux file systems take.
    public static let maxNameBytes = 255

    /// The archive suffixes a drop's name may end in, longest first where one ends
    /// another (`.tar.gz` before `.tar`), matched without regard to ASCII case.
    static let archiveSuffixes = [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar.lz", ".tar.lzma", ".tgz", ".tar", ".zip", ".7z",
                                  ".plist", ".archive", ".rar", ".iso", ".cab", ".cpio"]

    /// `name` split into its stem and its archive suffix, as spelled (empty if none):
    /// the one place that strips suffixes, for outbox names and for releases into
    /// the inbox alike. A name that is nothing but a suffix keeps it as its stem.
    public static func split(_ name: [UInt8]) -> (stem: [UInt8], suffix: [UInt8]) {
        let lowered = name.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        for suffix in archiveSuffixes {
            let bytes = Array(suffix.utf8)
            if lowered.count > bytes.count, Array(lowered.suffix(bytes.count)) == bytes {
                return (Array(name.dropLast(bytes.count)), Array(name.suffix(bytes.count)))
            }
        }
        return (name, [])
    }

    /// `stem + suffix`, then `stem-2 + suffix` … `stem-999 + suffix`, each at most
    /// `maxNameBytes`: the stem loses whole UTF-8 sequences from its end until the
    /// number and the suffix fit. A prefix of a name the path policy accepts cut
    /// there is accepted too (no component turns empty, `.` or `..`, no byte is
    /// split), and the suffix stays, so the outbox name still follows from it.
    ///
    /// Made as they are asked for: nearly every drop takes the first.
    public static func candidates(stem: [UInt8], suffix: [UInt8]) -> LazyMapSequence<Range<Int>, [UInt8]> {
        (0..<999).lazy.map { index in
            let number = index + 1
            let tail = (number == 1 ? [] : Array("-\(number)".utf8)) + suffix
            return shortened(stem, to: max(1, maxNameBytes - tail.count)) + tail
        }
    }

    /// The longest prefix of `bytes` of at most `limit` bytes that does not end
    /// inside a UTF-8 sequence (where the bytes are not UTF-8, any cut will do).
    static func shortened(_ bytes: [UInt8], to limit: Int) -> [UInt8] {
        guard bytes.count > limit else { return bytes }
        // The first byte dropped is a continuation byte (10xxxxxx) when the cut
        // splits a sequence: back up to the sequence's lead byte, at most 3 bytes.
        var end = limit
        while end > limit - 3, end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        if bytes[end] & 0xC0 == 0x80 { end = limit }
        return Array(bytes[..<end])
    }
}
