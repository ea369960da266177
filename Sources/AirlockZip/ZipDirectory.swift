import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockText

/// A ZIP archive's central directory, read and cross-checked by airlock itself
/// before libarchive extracts a byte.
///
/// libarchive hands back names converted (a NUL inside a name is lost, and a name
/// flagged UTF-8 comes back in NFC) and does not expose where each entry's data
/// lies, so the layout is judged here: every byte of the file must belong to
/// exactly one entry's local record, the directory or the end records, in that
/// order, with the first entry at byte 0. Bytes nothing accounts for (a prefix, a
/// gap, an overlap, an archive in the comment) are where two readers can see two
/// different archives, so they are rejected, never skipped.
public struct ZipDirectory: Sendable {
    public struct Entry: Sendable {
        public let name: [UInt8]
        public let flags: UInt16
        public let method: UInt16
        public let crc: UInt32
        public let compressedSize: Int64
        public let uncompressedSize: Int64
        public let localHeaderOffset: Int64
        /// Where the entry's local record ends (header, name, extra, data, descriptor).
        public var recordEnd: Int64 = 0
        /// Where the entry's compressed data starts, after its local header's name and extra field.
        public var dataOffset: Int64 = 0
        public let madeByUnix: Bool
        public let externalAttributes: UInt32
        /// The directory record has a ZIP64 field (so its data descriptor, if any, is wide).
        public let usesZip64: Bool
        let unicodePath: ZipExtra.UnicodePath?
        /// The UTF-8 name that is judged and lands, which `name` may store in a legacy code page.
        public var landingName: [UInt8] = []
        /// The name libarchive yields for the entry: its local header's, which
        /// decodes to the same name as the directory's.
        public var key = NameKey([])
        /// The code page `landingName` was decoded from, if any.
        public var legacyEncoding: String?
        /// A stored entry whose data descriptor has no signature (ZipLocalRecord.checkUnsigned).
        var storedWithoutSignature = false

        public var isEncrypted: Bool { flags & 0x0001 != 0 || flags & 0x0040 != 0 || method == 99 }
        public var isDirectoryName: Bool { name.last == UInt8(ascii: "/") }
        public var hasDataDescriptor: Bool { flags & 0x0008 != 0 }

        /// The entry's type from the Unix mode in the external attributes, if any.
        public var unixType: UInt32? {
            guard madeByUnix else { return nil }
            let type = (externalAttributes >> 16) & 0o170000
            return type == 0 ? nil : type
        }
    }

    public let entries: [Entry]

    /// Reads the end records, the central directory and every local record of the
    /// ZIP file open at `file`, `fileSize` bytes long.
    public init(file: DropFile, fileSize: Int64, maxEntries: Int, legacyNames: TextConverter) throws(Failure) {
        let reader = Reader(file: file, size: fileSize)
        let end = try ZipEndRecords(reader)
        // Past the limit the count alone rejects, so a huge directory is never read.
        guard end.entryCount <= Int64(maxEntries) else { throw .tooManyEntries(end.entryCount) }
        let directory = try reader.bytes(at: end.directoryOffset, count: Int(end.directorySize))
        var entries = try ZipDirectory.records(directory, count: Int(end.entryCount))
        for index in entries.indices {
            let resolved = try ZipName.resolve(stored: entries[index].name, flags: entries[index].flags,
                                               unicode: entries[index].unicodePath, converter: legacyNames)
            entries[index].landingName = resolved.landing
            entries[index].key = resolved.key
            entries[index].legacyEncoding = resolved.encoding
            try ZipLocalRecord.check(&entries[index], reader: reader, names: legacyNames)
        }
        try ZipDirectory.checkLayout(entries, directoryOffset: end.directoryOffset)
        try ZipLocalRecord.checkUnsigned(entries, directoryOffset: end.directoryOffset, reader: reader)
        self.entries = entries
    }

    /// The directory's records, parsed from memory; they must fill it exactly.
    private static func records(_ directory: [UInt8], count: Int) throws(Failure) -> [Entry] {
        var cursor = 0
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            guard cursor + 46 <= directory.count, directory.u32(cursor) == 0x0201_4B50 else {
                throw .malformed("bad central directory record signature")
            }
            let nameLength = Int(directory.u16(cursor + 28)), extraLength = Int(directory.u16(cursor + 30))
            let recordLength = 46 + nameLength + extraLength + Int(directory.u16(cursor + 32))
            guard cursor + recordLength <= directory.count else { throw .malformed("a central directory record overruns the directory") }
            let name = Array(directory[(cursor + 46)..<(cursor + 46 + nameLength)])
            // No published version of the format is past 6.3, and zipfile refuses such an entry.
            guard directory.u16(cursor + 6) & 0xFF <= 63 else {
                throw .malformed("\(EscapedName(name)): needs ZIP version \(directory.u16(cursor + 6) & 0xFF), newer than any published")
            }
            // Flag bit 5 marks PKZIP 2.7's compressed patched data: zipfile refuses
            // such an entry, libarchive reads its bytes as the file itself.
            guard directory.u16(cursor + 8) & 0x0020 == 0 else {
                throw .malformed("\(EscapedName(name)): compressed patched data (flag bit 5), which readers take differently")
            }
            let extra = ZipExtra(Array(directory[(cursor + 46 + nameLength)..<(cursor + 46 + nameLength + extraLength)]))
            var fields = ZipExtra.Sizes(uncompressed: UInt64(directory.u32(cursor + 24)), compressed: UInt64(directory.u32(cursor + 20)),
                                        offset: UInt64(directory.u32(cursor + 42)), disk: UInt32(directory.u16(cursor + 34)))
            let unicodePath = try extra.check(name: name)
            try extra.applyZip64(&fields)
            guard fields.disk == 0 else { throw .malformed("\(EscapedName(name)): multi-disk archive (an entry on another disk)") }
            entries.append(Entry(
                name: name, flags: directory.u16(cursor + 8), method: directory.u16(cursor + 10), crc: directory.u32(cursor + 16),
                compressedSize: try Reader.int64(fields.compressed, "a compressed size"),
                uncompressedSize: try Reader.int64(fields.uncompressed, "a size"),
                localHeaderOffset: try Reader.int64(fields.offset, "a local header offset"),
                madeByUnix: directory.u16(cursor + 4) >> 8 == 3, externalAttributes: directory.u32(cursor + 38),
                usesZip64: extra.hasZip64, unicodePath: unicodePath))
            cursor += recordLength
        }
        guard cursor == directory.count else { throw .malformed("central directory size disagrees with its records") }
        return entries
    }

    /// Local records must follow one another from byte 0 up to the directory, with
    /// nothing before, between or after them.
    ///
    /// Bytes before the first entry are refused too, though Python's zipfile and
    /// libarchive both read a ZIP behind a self-extractor stub or padding: each
    /// finds the shift its own way (zipfile from where the directory ends,
    /// libarchive by scanning forward for a directory signature), and the stub is
    /// bytes no entry accounts for, able to hold a second archive for a reader that
    /// starts at byte 0.
    private static func checkLayout(_ entries: [Entry], directoryOffset: Int64) throws(Failure) {
        var expected: Int64 = 0
        var previous: Entry?
        for entry in entries.sorted(by: { $0.localHeaderOffset < $1.localHeaderOffset }) {
            if entry.localHeaderOffset < expected, let previous {
                throw .malformed("entries overlap: \(EscapedName(previous.name)) and \(EscapedName(entry.name)) share bytes")
            }
            guard entry.localHeaderOffset == expected else {
                let place = previous.map { "after \(EscapedName($0.name))" } ?? "before the first entry"
                throw .malformed("\(entry.localHeaderOffset - expected) bytes \(place) that no entry accounts for")
            }
            expected = entry.recordEnd
            previous = entry
        }
        if directoryOffset < expected, let previous {
            throw .malformed("\(EscapedName(previous.name)): data runs into the central directory")
        }
        guard directoryOffset == expected else {
            let place = previous.map { "after \(EscapedName($0.name))" } ?? "before the central directory"
            throw .malformed("\(directoryOffset - expected) bytes \(place) that no entry accounts for")
        }
    }
}

extension ZipDirectory {
    /// How the scan matches an entry libarchive yields to its directory record.
    ///
    /// libarchive converts a name flagged UTF-8 (or given by a Unicode path field)
    /// to NFC: archive_string.c normalises every conversion from UTF-8 on platforms
    /// other than macOS, and offers no option to turn that off (the ZIP reader's
    /// `hdrcharset` option applies only to names without the flag, and
    /// archive_entry_pathname_utf8 returns the same converted text). A macOS name in NFD
    /// therefore comes back spelled differently from the bytes the archive holds.
    /// Canonically equivalent spellings make one key (Swift compares strings by
    /// canonical equivalence), and what lands is the directory's spelling. The
    /// preflight has already refused two directory names that are equivalent, so a
    /// key finds at most one entry.
    public enum NameKey: Hashable, Sendable {
        case text(String)
        case bytes([UInt8])

        public init(_ raw: [UInt8]) {
            if let text = String(validating: raw, as: UTF8.self) { self = .text(text) } else { self = .bytes(raw) }
        }
    }

    /// The entries by the key their yielded name must match. libarchive yields
    /// a name without the UTF-8 flag as the bytes stored (no `hdrcharset` is set,
    /// and this platform's default conversion for reading is none), and a
    /// Unicode path field whose CRC matches in place of the name; `ZipName`
    /// decodes the stored bytes itself and has checked the field agrees.
    public var byName: [NameKey: Entry] {
        Dictionary(entries.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
