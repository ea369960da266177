import AirlockFormats
import AirlockPolicy

/// The classes a file's first bytes decide, from a fixed table: the same on
/// every host, never the host's binfmt_misc registrations (Debian's OpenJDK
/// registers `PK\x03\x04` for JAR files, which would make every ZIP executable
/// on that host only).
enum FileHead {
    /// How many leading bytes the table and the script headers look at.
    static let length = 4096

    /// Magic numbers of what an operating system runs, at offset 0: ELF whatever
    /// the rest of its header says (the kernel checks only these four bytes and
    /// what it needs to map the file), DOS/PE (`MZ`, and `ZM`, which DOS also
    /// accepts) whatever `e_lfanew` says, Mach-O thin (both word sizes, both byte
    /// orders) and fat (`CAFEBABE`, which Java class files share, and the 64-bit
    /// `CAFEBABF`), WebAssembly and Dalvik.
    static let executableMagic: [[UInt8]] = [
        [0x7F, 0x45, 0x4C, 0x46],
        [0x4D, 0x5A], [0x5A, 0x4D],
        [0xFE, 0xED, 0xFA, 0xCE], [0xFE, 0xED, 0xFA, 0xCF], [0xCE, 0xFA, 0xED, 0xFE], [0xCF, 0xFA, 0xED, 0xFE],
        [0xCA, 0xFE, 0xBA, 0xBE], [0xCA, 0xFE, 0xBA, 0xBF],
        [0x00, 0x61, 0x73, 0x6D],
        Array("dex\n".utf8),
    ]

    /// A Windows shell link (.lnk): header size 0x4C and its class id.
    static let shellLink: [UInt8] = [0x4C, 0, 0, 0, 0x01, 0x14, 0x02, 0, 0, 0, 0, 0, 0xC0, 0, 0, 0, 0, 0, 0, 0x46]

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// What the head alone says: executable and script magic, script headers, a nested archive.
    static func classes(_ head: [UInt8]) -> Set<ContentClass> {
        var classes = Set<ContentClass>()
        let text = head.starts(with: byteOrderMark) ? Array(head.dropFirst(3)) : head
        if executableMagic.contains(where: { head.starts(with: $0) }) { classes.insert(.executable) }
        // The kernel runs any `#!` file whatever the interpreter and spacing; a
        // byte order mark in front stops the kernel, not a shell or a user who runs it.
        if text.starts(with: [0x23, 0x21]) { classes.formUnion([.executable, .script]) }
        if head.starts(with: shellLink) || ScriptHeader.matches(text) { classes.insert(.script) }
        if ArchiveFormat.sniff(Array(head.prefix(ArchiveFormat.sniffLength))) != nil { classes.insert(.archive) }
        return classes
    }

    /// Whether the head opens an OLE2 compound file (Office 97-2003, MSI).
    static func isCompoundFile(_ head: [UInt8]) -> Bool {
        head.starts(with: [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1])
    }

    /// Whether a PDF reader would take the file: `%PDF-` within its first 1024 bytes, as Acrobat looks.
    static func isPDF(_ head: [UInt8]) -> Bool {
        let marker = Array("%PDF-".utf8)
        return ByteText.contains(head.prefix(1024 + marker.count), marker)
    }

    /// Whether the head opens a ZIP (OOXML, ODF, JAR and EPUB are ZIPs).
    static func isZip(_ head: [UInt8]) -> Bool { head.starts(with: [0x50, 0x4B, 0x03, 0x04]) }
}

/// Script languages Windows runs by their own hosts, recognised by how their
/// files begin, for when the extension lies: batch, VBScript and JScript under
/// Windows Script Host, Windows Script Files and scriptlets, PowerShell.
enum ScriptHeader {
    /// Openings, after leading blank space, compared without case.
    static let openings = ["@echo ", "@echo\t", "@echo\r", "@echo\n", "option explicit", "on error resume next", "<job", "<package",
                           "<scriptlet", "#requires -", "[cmdletbinding(", "param(", "param ("].map { Array($0.utf8) }
    /// Elements that make an XML file a script file or scriptlet.
    static let xmlScriptTags = ["<job", "<package", "<scriptlet"].map { Array($0.utf8) }
    /// Calls only these hosts offer, anywhere in the head, compared without case,
    /// each with the offset of a punctuation byte it holds: the head is searched
    /// for those bytes, which plain text has few of, rather than letter by letter.
    static let calls: [(text: [UInt8], anchor: Int)] = [
        ("wscript.", 7), ("cscript.", 7), ("createobject(", 12), ("activexobject(", 13), ("getobject(\"winmgmts", 9),
        ("invoke-expression", 6), ("new-object system.net", 3), ("new-object net.webclient", 3), ("-encodedcommand", 0),
        ("add-type -", 3),
    ].map { (Array($0.0.utf8), $0.1) }

    static func matches(_ text: [UInt8]) -> Bool {
        let openings = ScriptHeader.openings, calls = ScriptHeader.calls, tags = ScriptHeader.xmlScriptTags
        return text.withUnsafeBufferPointer { bytes in
            var start = 0
            while start < bytes.count, ByteText.isSpace(bytes[start]) { start += 1 }
            if openings.contains(where: { ByteText.hasPrefix(bytes, at: start, $0) }) { return true }
            let xml = ByteText.hasPrefix(bytes, at: start, Array("<?xml".utf8))
            var index = 0
            while index < bytes.count {
                // Eight bytes at a time where none is punctuation a call holds (or `<`).
                if bytes.count - index >= 8 {
                    let word = UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    if !ByteText.mayHold(word, UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: "-"), UInt8(ascii: "<")) {
                        index += 8
                        continue
                    }
                }
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "."), UInt8(ascii: "("), UInt8(ascii: "-"):
                    for call in calls where call.text[call.anchor] == byte && index - 1 >= call.anchor
                        && ByteText.hasPrefix(bytes, at: index - 1 - call.anchor, call.text) {
                        return true
                    }
                case UInt8(ascii: "<") where xml:
                    if tags.contains(where: { ByteText.hasPrefix(bytes, at: index - 1, $0) }) { return true }
                default:
                    continue
                }
            }
            return false
        }
    }
}

/// Byte-level text helpers the classifiers share; ASCII only, as the formats are.
enum ByteText {
    @inline(__always) static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
    @inline(__always) static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
    @inline(__always) static func isLetter(_ byte: UInt8) -> Bool { lower(byte) >= 0x61 && lower(byte) <= 0x7A }

    /// Whether any byte of `word` is one of the four given (the zero-byte test on each comparison).
    @inline(__always) static func mayHold(_ word: UInt64, _ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func has(_ byte: UInt8) -> UInt64 {
            let folded = word ^ (ones &* UInt64(byte))
            return (folded &- ones) & ~folded & highs
        }
        return has(a) | has(b) | has(c) | has(d) != 0
    }

    /// Whether `bytes` hold `needle` (lowercase) at `offset`, compared without case.
    static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, _ needle: [UInt8]) -> Bool {
        guard offset >= 0, bytes.count - offset >= needle.count else { return false }
        for index in needle.indices where lower(bytes[offset + index]) != needle[index] { return false }
        return true
    }

    /// Whether the bytes after `index` are `word` exactly (case counts), then a blank.
    static func isFollowed(_ bytes: UnsafeRawBufferPointer, after index: Int, byWordAndBlank word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + 1 + count < bytes.count else { return false }
        for offset in 0..<count where bytes[index + 1 + offset] != word.utf8Start[offset] { return false }
        return isSpace(bytes[index + 1 + count])
    }

    /// Whether `needle` (lowercase) occurs in `haystack` (already lowercase).
    static func contains<C: Collection>(_ haystack: C, _ needle: [UInt8]) -> Bool where C.Element == UInt8, C.Index == Int {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
