import AirlockSystem

/// Finds a PDF's active names as a reader finds them, streaming: every name
/// token, with its `#xx` escapes decoded (`/J#61vaScript` is `/JavaScript`),
/// in the file's own syntax and inside every FlateDecode stream, which is where
/// compressed object streams keep their dictionaries. Stream data is read up
/// to where its deflate data ends, not to the first `endstream` in it, and what
/// is inflated is bounded by a budget: a file whose streams inflate to more than
/// that cannot be cleared, so it counts as active (fail closed).
///
/// Streams under filters this scan does not decode (ASCIIHex, ASCII85, LZW,
/// RunLength, Crypt), object streams (which readers know by `/First`, not by
/// their `/Type`) under a PNG predictor, which splits their names, and
/// encrypted files (`/Encrypt`) could hide their names from it, so they
/// cannot be cleared and count as active too (fail closed).
///
/// `/OpenAction` alone is not active: hyperref writes `/OpenAction [p /Fit]`
/// into most PDFs LaTeX makes. What an action does is in its own names.
struct PDFScan {
    /// JavaScript actions and their code (`/JS`), launching programs, files
    /// carried inside, XFA forms (whose XML holds scripts of its own, in a
    /// stream this scan does not parse) and rich media (Flash); `/Encrypt`
    /// because an encrypted file's names cannot be read.
    static let activeNames: Set<[UInt8]> = Set(["JavaScript", "JS", "Launch", "EmbeddedFile", "EmbeddedFiles", "XFA", "RichMedia",
                                                "Encrypt"].map { Array($0.utf8) })
    /// Filters, full and abbreviated, whose output this scan cannot read.
    static let undecodedFilters: Set<[UInt8]> = Set(["ASCIIHexDecode", "AHx", "ASCII85Decode", "A85", "LZWDecode", "LZW",
                                                     "RunLengthDecode", "RL", "Crypt"].map { Array($0.utf8) })
    /// What all of a file's streams may inflate to.
    static let inflateBudget = 256 << 20

    private var outer = PDFTokens()
    private var inflater: Inflater?
    private var inner = PDFTokens()
    private var budget = PDFScan.inflateBudget
    private(set) var active = false

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        var rest = chunk
        while !rest.isEmpty, !active {
            if let inflater {
                let used = inflater.feed(rest) { inner.scanNames($0) }
                // The raw bytes are scanned too: a name no reader could see costs nothing but a false alarm.
                outer.scanNames(UnsafeRawBufferPointer(rebasing: rest[..<used]))
                rest = UnsafeRawBufferPointer(rebasing: rest[used...])
                budget = inflater.budget
                if inflater.state == .overBudget { active = true }
                if inflater.state != .more { self.inflater = nil }
            } else {
                let used = outer.scan(rest)
                rest = UnsafeRawBufferPointer(rebasing: rest[used...])
                if outer.streamStarts {
                    outer.streamStarts = false
                    if outer.undecodedDictionary { active = true }
                    if outer.flateDictionary { inflater = Inflater(raw: false, budget: budget) }
                }
            }
            if outer.sawActive || inner.sawActive { active = true }
        }
    }

    mutating func finish() {
        outer.finish()
        inner.finish()
        if outer.sawActive || inner.sawActive { active = true }
    }
}

/// PDF's lexical level, as much of it as finding names and streams needs.
struct PDFTokens {
    /// The name being read, decoded, and its pending `#xx` escape (-1: none).
    private var name: [UInt8] = []
    private var inName = false
    private var hexDigits = -1
    private var hexValue: UInt8 = 0
    private var word: [UInt8] = []
    private var afterStream = false
    /// Whether a dictionary since the last `obj` named FlateDecode (or its abbreviation, Fl).
    private(set) var flateDictionary = false
    /// Whether it named a filter the scan cannot decode, or both `/First` and
    /// `/Predictor` (an object stream whose inflated bytes are not its text).
    private(set) var undecodedDictionary = false
    private var names: (first: Bool, predictor: Bool) = (false, false)
    /// Set when the `stream` keyword and its end of line have been read.
    var streamStarts = false
    private(set) var sawActive = false

    /// Scans names and keywords; stops right after a stream's end of line (returning the bytes used).
    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Int {
        for index in bytes.indices {
            let byte = bytes[index]
            if afterStream {
                // `stream` then CR LF, or a CR alone, which readers accept too.
                afterStream = false
                streamStarts = true
                return byte == 0x0A ? index + 1 : index
            }
            scanName(byte)
            if keywordEndsStream(byte) {
                if byte == 0x0A {
                    streamStarts = true
                    return index + 1
                }
                afterStream = true
            }
        }
        return bytes.count
    }

    /// Scans names only: inflated object streams, and raw stream data.
    ///
    /// Outside a name only a `/` changes anything, so the bytes up to the next one
    /// are skipped with memchr(3) rather than looked at one by one: an inflate bomb
    /// (hundreds of MiB of zeros, up to the budget) costs a fast pass, not a
    /// byte-by-byte one.
    mutating func scanNames(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            if !inName {
                guard let slash = ByteSearch.firstIndex(of: UInt8(ascii: "/"), in: bytes, from: index) else { return }
                index = slash
            }
            scanName(bytes[index])
            index += 1
        }
    }

    /// Ends a name the file ends in.
    mutating func finish() {
        if inName { finishName(name) }
        inName = false
    }

    /// Collects keywords; true when `byte` is the end of line after `stream`.
    private mutating func keywordEndsStream(_ byte: UInt8) -> Bool {
        if PDFTokens.isRegular(byte) && !inName {
            if word.count < 16 { word.append(byte) }
            return false
        }
        defer { word.removeAll(keepingCapacity: true) }
        switch word {
        case Array("stream".utf8): return byte == 0x0D || byte == 0x0A
        case Array("obj".utf8), Array("endobj".utf8), Array("endstream".utf8):
            flateDictionary = false
            undecodedDictionary = false
            names = (false, false)
        default: break
        }
        return false
    }

    private mutating func scanName(_ byte: UInt8) {
        guard inName else {
            if byte == UInt8(ascii: "/") { startName() }
            return
        }
        if hexDigits >= 0 {
            guard let digit = PDFTokens.hexValue(byte) else {
                hexDigits = -1
                return scanName(byte)
            }
            hexValue = hexValue << 4 | digit
            hexDigits += 1
            if hexDigits == 2 {
                if name.count < 128 { name.append(hexValue) }
                hexDigits = -1
            }
            return
        }
        if PDFTokens.isRegular(byte) {
            if byte == UInt8(ascii: "#") {
                hexDigits = 0
                hexValue = 0
            } else if name.count < 128 {
                name.append(byte)
            }
            return
        }
        finishName(name)
        inName = false
        if byte == UInt8(ascii: "/") { startName() }
    }

    private mutating func startName() {
        inName = true
        hexDigits = -1
        name.removeAll(keepingCapacity: true)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private mutating func finishName(_ decoded: [UInt8]) {
        if PDFScan.activeNames.contains(decoded) { sawActive = true }
        if decoded == Array("FlateDecode".utf8) || decoded == Array("Fl".utf8) { flateDictionary = true }
        if PDFScan.undecodedFilters.contains(decoded) { undecodedDictionary = true }
        if decoded == Array("First".utf8) { names.first = true }
        if decoded == Array("Predictor".utf8) { names.predictor = true }
        if names.first && names.predictor { undecodedDictionary = true }
    }

    /// Neither white space nor a delimiter (PDF 32000-1, 7.2.2).
    static func isRegular(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00, 0x09, 0x0A, 0x0C, 0x0D, 0x20: return false
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "["), UInt8(ascii: "]"),
             UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "/"), UInt8(ascii: "%"): return false
        default: return true
        }
    }
}
