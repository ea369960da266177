@testable import AirlockChild
import AirlockPolicy
import AirlockTestSupport
import CAirlockSieve
import Testing

@Suite("CarryWindow and the markup search: every position once, whatever the chunks and wherever a pattern falls")
struct CarryWindowTests {
    /// Feeds `count` bytes (byte i holds i & 0xFF) in chunks of `sizes`, cycled, and
    /// checks each visit: every position visited exactly once, in order, with the
    /// bytes around it as the file holds them, as far as the window promises.
    private func check(count: Int, sizes: [Int], lookBehind: Int, lookAhead: Int) {
        let file = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
        var window = CarryWindow(lookBehind: lookBehind, lookAhead: lookAhead)
        var visited: [Int] = []
        var wrong = 0
        var offset = 0
        let visit: (UnsafeRawBufferPointer, Range<Int>) -> Void = { bytes, positions in
            for position in positions {
                let fileIndex = visited.count
                visited.append(fileIndex)
                let before = min(lookBehind, fileIndex), after = min(lookAhead, count - fileIndex - 1)
                guard position - before >= 0, position + after < bytes.count else { wrong += 1; continue }
                for k in -before...after where bytes[position + k] != file[fileIndex + k] { wrong += 1 }
            }
        }
        var turn = 0
        file.withUnsafeBytes { all in
            while offset < count {
                let size = min(sizes[turn % sizes.count], count - offset)
                turn += 1
                window.feed(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + size)]), visit)
                offset += size
            }
        }
        window.finish(visit)
        expectEqual(visited.count, count, "\(count) bytes in chunks of \(sizes), \(lookBehind) behind, \(lookAhead) ahead")
        expectEqual(wrong, 0, "\(count) bytes in chunks of \(sizes), \(lookBehind) behind, \(lookAhead) ahead")
    }

    @Test("each position is visited once with its look-behind and look-ahead, for chunks smaller than, equal to and larger than the seam")
    func positions() {
        for (behind, ahead) in [(48, 16), (0, 3), (0, 12)] {
            let seam = behind + ahead
            for sizes in [[1], [7], [seam], [seam + 1], [2 * seam + 5], [4093], [65536], [1, seam + 1, 3, 200, seam]] {
                for count in [0, 1, seam - 1, seam, seam + 1, 3 * seam + 7, 70_000] {
                    check(count: count, sizes: sizes, lookBehind: behind, lookAhead: ahead)
                }
            }
        }
    }

    @Test("active markup is found wherever it sits: each offset in a sixteen-byte block, across a chunk's seam, at a file's ends")
    func markupAtEveryOffset() {
        let patterns: [(String, Set<ContentClass>)] = [("<script>", [.activeContent]), ("<html ", [.activeContent])]
        for (pattern, classes) in patterns {
            for offset in 0..<40 {
                for tail in [0, 1, 30] {
                    var bytes = [UInt8](repeating: 0x41, count: offset) + Array(pattern.utf8) + [UInt8](repeating: 0x41, count: tail)
                    // A binary head, so that only the search can find it.
                    bytes[0] = offset > 0 ? 0x00 : bytes[0]
                    for chunk in [1, 5, 16, 17, 64, 65, 100, 4096] {
                        expectEqual(ContentClasses.of(name: Array("x.bin".utf8), bytes: bytes, chunkSize: chunk), classes,
                                    "\(pattern) at \(offset), \(tail) after, chunks of \(chunk)")
                    }
                }
            }
        }
        // A handler in markup needs the look-behind: across every seam too.
        for offset in 0..<40 {
            let bytes = Array("<svg>".utf8) + [UInt8](repeating: 0x20, count: offset) + Array("<a onclick=x>".utf8)
            for chunk in [1, 7, 16, 64, 65] {
                expectEqual(ContentClasses.of(name: Array("x.svg".utf8), bytes: bytes, chunkSize: chunk), [.activeContent],
                            "handler at \(offset), chunks of \(chunk)")
            }
        }
        // And the bytes that start a search and find nothing are nothing.
        let noise = (0..<100_000).map { i -> UInt8 in [UInt8(ascii: "<"), UInt8(ascii: ":"), UInt8(ascii: "="), 0x00, 0x41][i % 5] }
        expect(ContentClasses.of(name: Array("noise.bin".utf8), bytes: noise).isEmpty)
    }

    @Test("a handler's blanks before its `=` and a script URL's tabs and line breaks count however many, wherever the chunks fall")
    func unboundedBlanks() {
        func classes(_ text: [UInt8], _ chunk: Int) -> Set<ContentClass> {
            ContentClasses.of(name: Array("x.svg".utf8), bytes: text, chunkSize: chunk)
        }
        for blanks in [0, 1, 30, 47, 48, 49, 64, 100, 5000] {
            let run = { (byte: UInt8) in [UInt8](repeating: byte, count: blanks) }
            let handler = Array("<svg><a onclick".utf8) + run(0x20) + Array("=x>".utf8)
            let url = Array("<svg><a href=\"java".utf8) + run(0x09) + Array("script:x\">".utf8)
            let spread = Array("<svg><a href=\"".utf8) + Array("vbscript".utf8).flatMap { [$0] + run(0x0A) } + Array(":x\">".utf8)
            // What only looks like them: not `on…`, not `…script`, a name then blanks then no `=`.
            let plain = [Array("<svg><a title".utf8) + run(0x20) + Array("=x>".utf8),
                         Array("<svg><a href=\"java".utf8) + run(0x09) + Array("scrip:x\">".utf8),
                         Array("<svg><a onclick".utf8) + run(0x20) + Array("x>=".utf8)]
            for chunk in [1, 7, 16, 64, 65, 4096] {
                for active in [handler, url, spread] {
                    expectEqual(classes(active, chunk), [.activeContent], "\(String(decoding: active.prefix(30), as: UTF8.self)) with \(blanks), chunks of \(chunk)")
                }
                for text in plain {
                    expect(!classes(text, chunk).contains(.activeContent), "\(String(decoding: text.prefix(30), as: UTF8.self)) with \(blanks), chunks of \(chunk)")
                }
            }
        }
    }

    @Test("character references in a URL, namespace prefixes and srcdoc count however long, wherever the chunks fall")
    func referencesAndPrefixes() {
        func classes(_ text: String, _ chunk: Int) -> Set<ContentClass> {
            ContentClasses.of(name: Array("x.svg".utf8), bytes: Array(text.utf8), chunkSize: chunk)
        }
        let link = { (url: String) in "<svg><a href=\"\(url)x\">" }
        var active = ["javascr&#105;pt:", "javascript&#58;", "javascript&#x3A;", "javascript&#X3a;", "javascript&colon;",
                      "java&Tab;script:", "java&#9;script&NewLine;:", "vbscr&#x69pt:", "jav&#x61script:",
                      "&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;", "javascript&#0058:"].map(link)
        var plain = ["javascript&#59;", "javascript&Colon;", "javascript&colon ", "javas&#0;cript:", "javascript&amp;colon;",
                     "javascrip&#116", "javascript&#x3A0;", "javascript&#5", "javas&tab;cript:"].map(link)
        for length in [1, 20, 47, 48, 49, 100, 5000] {
            let zeros = String(repeating: "0", count: length), name = String(repeating: "n", count: length)
            active += [link("javascript&#\(zeros)58;"), link("javascript&#x\(zeros)3a;"), link("javascrip&#\(zeros)116:"),
                       "<svg><\(name):script>x</\(name):script></svg>", "<svg><\(name):html ", "<svg ><iframe\(String(repeating: " ", count: length))srcdoc=\"&lt;script&gt;\">"]
            plain += [link("javascript&#\(zeros)59;"), "<svg><\(name):style>", "<svg><a \(name):script=\"x\">", "<svg>\(name):script ",
                      "<svg><a data-srcdoc\(String(repeating: " ", count: length))=\"x\">", "<svg><\(name):objects/>",
                      "<svg><image href=\"data:image/svg+xml;base64,PHN2Zy8+\"/></svg>"]
            active += ["<svg><foreignObject><\(name):iframe src=\"data:text/html,x\"/></foreignObject></svg>",
                       "<svg><foreignObject><object data=\"data:image/svg+xml;base64,PHN2Zy8+\"/></foreignObject></svg>",
                       "<svg><foreignObject><EMBED src=\"x.svg\"/><frame/></foreignObject></svg>"]
        }
        // Entities a document type declares, which a browser expands and the search does not.
        let declaring = { (entities: String, body: String) in "<?xml version=\"1.0\"?><!DOCTYPE svg [\(entities)]><svg>\(body)</svg>" }
        active += [declaring("<!ENTITY a \"java\"><!ENTITY b \"script\">", "<a href=\"&a;&b;:x\">"),
                   declaring("<!ENTITY c \"&#58;\">", "<a href=\"javascript&c;x\">"),
                   declaring("<!ENTITY j \"javascr\">", "<a href=\"&j;\n\tipt:x\">"),
                   declaring("<!ENTITY j \"javascr\">", "<a href=\"&j;&#x69;pt:x\">"),
                   declaring("<!ENTITY s \"&#60;script&#62;x&#60;/script&#62;\">", "&s;"),
                   declaring("<!ENTITY \(String(repeating: "n", count: 300)) \"x\">", "<a href=\"java&\(String(repeating: "n", count: 300));:x\">")]
        plain += [declaring("<!ENTITY ns \"http://example.org/ns\">", "<g xmlns:x=\"&ns;\"><a href=\"https://example.org/&ns;\"/></g>"),
                  declaring("<!ENTITY ns \"x\">", "<text>&ns; is at: 12:30 &lt;b&gt;</text>"),
                  "<svg><a href=\"&a;&b;:x\">"]
        for chunk in [1, 2, 7, 16, 17, 64, 65, 4096] {
            for text in active { expectEqual(classes(text, chunk), [.activeContent], "\(text.prefix(60)), chunks of \(chunk)") }
            for text in plain { expect(!classes(text, chunk).contains(.activeContent), "\(text.prefix(60)), chunks of \(chunk)") }
        }
    }

    @Test("random markup made of the searched words, references, prefixes and blanks gets the same classes whatever the chunks")
    func sameWhateverTheChunks() {
        let tokens = ["<svg>", "<", "x", "h", ":", "script", "java", "vb", "&#", "&#x", "0", "58", "3a", "116", ";", "&colon;",
                      "&Tab;", "&NewLine;", "&amp;", "&", "\t", "\n", " ", "on", "load", "srcdoc", "=", "\"", "s", "t", "html", "-",
                      "<!ENTITY ", "&e;", "&#60;", "!"]
        var generator = SystemRandomNumberGenerator()
        var active = 0
        for round in 0..<300 {
            var text = "<svg>"
            while text.utf8.count < 20 + round { text += tokens.randomElement(using: &generator)! }
            let bytes = Array(text.utf8)
            let whole = ContentClasses.of(name: Array("x.svg".utf8), bytes: bytes, chunkSize: 1 << 16)
            if whole.contains(.activeContent) { active += 1 }
            for chunk in [1, 2, 3, 16, 17, 31] {
                expectEqual(ContentClasses.of(name: Array("x.svg".utf8), bytes: bytes, chunkSize: chunk), whole, "\(text), chunks of \(chunk)")
            }
        }
        // The words are common enough that both verdicts are tried.
        expect(active > 10 && active < 290, "\(active) of 300 active")
    }

    @Test("a character reference is decoded as a browser decodes it in an attribute, the rest left as its bytes")
    func characterReferences() {
        func read(_ text: String, atFileEnd: Bool = true) -> (CharacterReference.Step, next: Int) {
            let bytes = Array(("&" + text).utf8)
            return bytes.withUnsafeBytes { CharacterReference.read($0, after: 0, to: $0.count, atFileEnd: atFileEnd) }
        }
        let cases: [(String, CharacterReference.Step, Int)] = [
            ("#58;", .decoded(0x3A, consumed: true), 5), ("#58x", .decoded(0x3A, consumed: false), 4),
            ("#x3a;", .decoded(0x3A, consumed: true), 6), ("#X3A", .decoded(0x3A, consumed: false), 5),
            ("#00000000000000000000115;", .decoded(0x73, consumed: true), 26),
            ("#0;", .decoded(CharacterReference.nonASCII, consumed: true), 4),
            ("#99999999999999999999;", .decoded(CharacterReference.nonASCII, consumed: true), 23),
            ("#128;", .decoded(CharacterReference.nonASCII, consumed: true), 6),
            ("colon;", .decoded(0x3A, consumed: true), 7), ("Tab;", .decoded(0x09, consumed: true), 5),
            ("NewLine;", .decoded(0x0A, consumed: true), 9),
            ("Colon;", .plain, 1), ("colon ", .plain, 6), ("amp;", .plain, 1), ("#;", .plain, 2), ("#x;", .plain, 3),
            ("#xg", .plain, 3), (" ", .plain, 1), ("NewLines;", .plain, 8),
        ]
        // Where the file declares entities, every other name is read whole.
        let declared = Array("&a_very-long.entity-name-past-eight;".utf8)
        let entity = declared.withUnsafeBytes { CharacterReference.read($0, after: 0, to: $0.count, atFileEnd: true, entities: true) }
        expectEqual(entity.0, .decoded(CharacterReference.entity, consumed: true))
        expectEqual(entity.1, declared.count)
        for (text, step) in [("&lt;", CharacterReference.Step.decoded(CharacterReference.nonASCII, consumed: true)),
                             ("&colon;", .decoded(0x3A, consumed: true)), ("&amp;", .decoded(CharacterReference.nonASCII, consumed: true)),
                             ("&x y", .plain)] {
            let bytes = Array(text.utf8)
            expectEqual(bytes.withUnsafeBytes { CharacterReference.read($0, after: 0, to: $0.count, atFileEnd: true, entities: true).0 }, step, text)
        }
        for (text, step, next) in cases {
            let (got, at) = read(text)
            expectEqual(got, step, "&\(text)")
            expectEqual(at, next, "&\(text)")
        }
        expectEqual(read("#58", atFileEnd: false).0, .more)
        expectEqual(read("#58", atFileEnd: true).0, .decoded(0x3A, consumed: false))
        expectEqual(read("colo", atFileEnd: true).0, .plain)
    }

    /// The positions the markup search's checks find something at, each tried on its own.
    private func findings(_ bytes: UnsafeRawBufferPointer, entities: Bool) -> [Int] {
        // A `:` right after a reference's `;` may end a script URL (one right after
        // a reference without its `;` is read with the reference, from its `&`).
        var afterReference = Set<Int>()
        for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "&") {
            let (step, next) = CharacterReference.read(bytes, after: index, to: bytes.count, atFileEnd: true, entities: entities)
            if case .decoded(_, consumed: true) = step { afterReference.insert(next) }
        }
        func opens(_ index: Int) -> Bool {
            MarkupScan.Found.opens(bytes, index, "script") || MarkupScan.Found.opens(bytes, index, "html")
                || MarkupScan.Found.opens(bytes, index, "svg") || MarkupScan.Found.opens(bytes, index, "iframe")
                || MarkupScan.Found.opens(bytes, index, "frame") || MarkupScan.Found.opens(bytes, index, "object")
                || MarkupScan.Found.opens(bytes, index, "embed")
        }
        return (0..<bytes.count).filter { index in
            switch bytes[index] {
            case UInt8(ascii: "<"):
                return opens(index) || MarkupScan.Found.declaresEntity(bytes, index) || StylesheetInstruction.opens(bytes, index)
            case UInt8(ascii: ":"):
                return MarkupScan.Found.endsWithScript(bytes, index) || afterReference.contains(index)
                    || (MarkupScan.Found.endsPrefix(bytes, index) && opens(index))
            case UInt8(ascii: "="): return MarkupScan.Found.isActiveAttribute(bytes, index)
            case UInt8(ascii: "&"):
                let read = CharacterReference.read(bytes, after: index, to: bytes.count, atFileEnd: true, entities: entities)
                if case .decoded = read.0 { return true }
                return false
            default: return false
            }
        }
    }

    @Test("the sieve passes every position a check finds something at, and sixteen at a time it picks what one at a time does")
    func sieve() {
        // Bytes that start or end findings, their neighbours' edge cases (case, the
        // spaces, the letters' bounds, bytes from 0x80), and words the checks look for.
        let alphabet: [[UInt8]] = ["<", ":", "=", "s", "S", "h", "H", "t", "T", "\t", "\n", "\r", " ", "a", "z", "Z", "@", "[", "`", "{",
                                   "on", "onload", "script", "html", "svg", "javascript", "vbscript", "srcdoc",
                                   "&", "#", "#x", ";", "0", "5", "9", "&#58;", "&#x3a;", "&colon;", "&Tab;", "&#116", "x:",
                                   "<!ENTITY ", "!", "&a;", "_", "&lt;", "&_x.y-z;", "iframe", "Frame", "object", "EMBED", "i", "F", "o", "e",
                                   "<?xml-stylesheet ", "?"].map { Array($0.utf8) }
            + [[0x00], [0x08], [0x0B], [0x0C], [0x0E], [0x80], [0xC1], [0xF3], [0xFF]]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<400 {
            let entities = round % 2 == 1
            var bytes: [UInt8] = []
            while bytes.count < 40 + round * 3 { bytes += alphabet.randomElement(using: &generator)! }
            bytes.withUnsafeBytes { all in
                let base = all.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var wide: [Int] = [], single: [Int] = []
                var index = 0
                while true {
                    index = airlock_markup_candidate(base, all.count, index, all.count, entities ? 1 : 0)
                    guard index < all.count else { break }
                    wide.append(index)
                    index += 1
                }
                for position in 0..<all.count where airlock_markup_candidate(base, all.count, position, position + 1, entities ? 1 : 0) == position {
                    single.append(position)
                }
                expectEqual(wide, single, "\(bytes)")
                let missed = Set(findings(all, entities: entities)).subtracting(wide)
                expect(missed.isEmpty, "the sieve skipped findings at \(missed.sorted()) of \(bytes)")
            }
        }
    }
}
