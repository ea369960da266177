@testable import AirlockChild
import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Markup in UTF-16 is searched as browsers read it: by its byte order mark, or a `<` as one code unit")
struct WideTextScanTests {
    /// `text` in UTF-16, little- or big-endian, with or without a byte order mark.
    static func encoded(_ text: String, littleEndian: Bool, mark: Bool) -> [UInt8] {
        let units = (mark ? [UInt16(0xFEFF)] : []) + Array(text.utf16)
        return units.flatMap { unit in
            let low = UInt8(truncatingIfNeeded: unit), high = UInt8(truncatingIfNeeded: unit >> 8)
            return littleEndian ? [low, high] : [high, low]
        }
    }

    static let active = ["<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>",
                         "<html><body>été</body></html>",
                         "<?xml version=\"1.0\"?><svg><a href=\"java&#9;script:x\">日本</a></svg>",
                         "<svg><text>😀</text><script>alert(1)</script></svg>",
                         "<h1>a page sniffed as HTML</h1>"]
    static let inactive = ["<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"1\"/><text>été 日本 😀</text></svg>",
                           "hello <b>world</b>, onload = nothing here"]

    @Test("each case in all four encodings, in chunks that split code units or not")
    func encodings() {
        let encodings: [(littleEndian: Bool, mark: Bool)] = [(true, true), (false, true), (true, false), (false, false)]
        let cases: [(texts: [String], expected: Set<ContentClass>)] = [(Self.active, [.activeContent]), (Self.inactive, [])]
        for (littleEndian, mark) in encodings {
            for (texts, expected) in cases {
                for text in texts {
                    // Without a mark, only what opens with `<` is read as UTF-16.
                    guard mark || text.hasPrefix("<") else { continue }
                    let bytes = Self.encoded(text, littleEndian: littleEndian, mark: mark)
                    for chunk in [1, 2, 3, 7, 64, 4096] {
                        expectEqual(ContentClasses.of(name: Array("x.txt".utf8), bytes: bytes, chunkSize: chunk), expected,
                                    "\(text) in UTF-16\(littleEndian ? "LE" : "BE")\(mark ? " with its mark" : ""), chunks of \(chunk)")
                    }
                }
            }
        }
    }

    @Test("the same text is not read as UTF-16 without a mark or an opening `<`, nor a UTF-8 file as UTF-16")
    func onlyWhereItSaysSo() {
        // A handler in UTF-16 after text, with no mark: browsers read it as bytes, where it is no markup.
        let unmarked = Self.encoded("x<svg onload=alert(1)>", littleEndian: true, mark: false)
        expect(!ContentClasses.of(name: Array("x.txt".utf8), bytes: unmarked).contains(.activeContent))
        // UTF-8 markup is read as before.
        expectEqual(ContentClasses.of(name: Array("x.svg".utf8), bytes: Array("<svg onload=alert(1)>".utf8)), [.activeContent])
        // A one-byte file, and a mark alone.
        expect(ContentClasses.of(name: Array("x.txt".utf8), bytes: [0xFF]).isEmpty)
        expect(ContentClasses.of(name: Array("x.txt".utf8), bytes: [0xFF, 0xFE]).isEmpty)
    }
}

@Suite("Scripts in UTF-16 are found by their heads, as Windows Script Host and PowerShell read them")
struct WideScriptHeaderTests {
    @Test("PowerShell and VBScript saved as UTF-16 with their mark are script whatever their name; UTF-16 prose is not")
    func scriptsInUTF16() {
        let scripts = ["param(\n  [string]$Path\n)\nInvoke-Expression (Get-Content $Path)\n",
                       "Set sh = CreateObject(\"WScript.Shell\")\r\nsh.Run \"calc\"\r\n",
                       "<?xml version=\"1.0\"?>\r\n<job id=\"x\"><script language=\"VBScript\">x</script></job>\r\n"]
        for text in scripts {
            for littleEndian in [true, false] {
                let bytes = WideTextScanTests.encoded(text, littleEndian: littleEndian, mark: true)
                for chunk in [1, 3, 4096] {
                    expect(ContentClasses.of(name: Array("notes.txt".utf8), bytes: bytes, chunkSize: chunk).contains(.script),
                           "\(text.prefix(20)) in UTF-16\(littleEndian ? "LE" : "BE"), chunks of \(chunk)")
                }
            }
        }
        let prose = WideTextScanTests.encoded("Dear team, the object was created (see page 3).\r\n", littleEndian: true, mark: true)
        expect(ContentClasses.of(name: Array("notes.txt".utf8), bytes: prose).isEmpty)
    }
}

@Suite("ISO-2022-JP's switches to ASCII, which a browser drops, do not hide markup")
struct ISO2022EscapeTests {
    @Test("a handler, a script element and a script URL split by ESC ( B or ESC ( J are found, whatever the chunks; other escapes are not taken out")
    func switches() {
        let escape = "\u{1B}"
        let active = ["<?xml version=\"1.0\" encoding=\"ISO-2022-JP\"?><svg onl\(escape)(Boad=\"x\"/>",
                      "<p>x</p><scr\(escape)(Jipt>x</script>",
                      "<svg><a href=\"javascr\(escape)(Bi\(escape)(Jpt:x\"/></svg>",
                      "<svg><a href=\"javascript&#5\(escape)(B8;x\"/></svg>"]
        let plain = ["<svg onl\(escape)$Boad=\"x\"/>", "<svg><text>\(escape)$B$3$s\(escape)(B onload</text></svg>",
                     "<svg><a href=\"javascr\(escape)(Xipt:x\"/></svg>", "<svg>\(escape)(", "<svg>\(escape)"]
        for chunk in [1, 2, 3, 16, 17, 4096] {
            for text in active {
                expectEqual(ContentClasses.of(name: Array("x.svg".utf8), bytes: Array(text.utf8), chunkSize: chunk), [.activeContent],
                            "\(text.debugDescription), chunks of \(chunk)")
            }
            for text in plain {
                expect(!ContentClasses.of(name: Array("x.svg".utf8), bytes: Array(text.utf8), chunkSize: chunk).contains(.activeContent),
                       "\(text.debugDescription), chunks of \(chunk)")
            }
        }
    }
}

@Suite("An <?xml-stylesheet instruction that runs an XSLT program is active content; a CSS one is not")
struct StylesheetInstructionTests {
    @Test("XSLT by any type or none, however long, wherever the chunks fall; text/css alone is clean")
    func instructions() {
        let document = { (instruction: String) in "<?xml version=\"1.0\"?>\n\(instruction)\n<doc>hello</doc>\n" }
        let padding = String(repeating: " ", count: 300)
        let programs = ["<?xml-stylesheet type=\"text/xsl\" href=\"style.xsl\"?>",
                        "<?xml-stylesheet href=\"style.xsl\"?>",
                        "<?xml-stylesheet\(padding)type = 'application/xslt+xml'\(padding)href=\"s\"?>",
                        "<?xml-stylesheet type=\"text/xsl\" title=\"text/css\" href=\"s\"?>",
                        "<?xml-stylesheet type=\"text/css\" type=\"text/xsl\" href=\"s\"?>",
                        "<?xml-stylesheet type=\"text/css\" href=\"a.css\"?><?xml-stylesheet type=\"text/xsl\" href=\"s\"?>",
                        "<?xml-stylesheet href=\"s\" \(String(repeating: "x", count: 2000))?>"]
        let styles = ["<?xml-stylesheet type=\"text/css\" href=\"a.css\"?>",
                      "<?xml-stylesheet\(padding)href=\"a.css\"\(padding)TYPE=\"text/css\"?>",
                      "<?xml-stylesheets type=\"text/xsl\"?>", "<!-- <?xml-stylesheet is not here -->"]
        for chunk in [1, 2, 7, 16, 17, 64, 4096] {
            for text in programs {
                expectEqual(ContentClasses.of(name: Array("feed.xml".utf8), bytes: Array(document(text).utf8), chunkSize: chunk),
                            [.activeContent], "\(text.prefix(70)), chunks of \(chunk)")
            }
            for text in styles {
                expect(ContentClasses.of(name: Array("feed.xml".utf8), bytes: Array(document(text).utf8), chunkSize: chunk).isEmpty,
                       "\(text.prefix(70)), chunks of \(chunk)")
            }
        }
    }
}
