import CAirlockSieve

/// Looks through a whole file, as it streams past, for what makes markup
/// active: a `<script` element or an `<html` document anywhere (which is how a
/// GIF or JPEG that is also an HTML page shows itself; in XML, under a namespace
/// prefix too, as `<x:script`), and in markup (HTML, XHTML, SVG, any XML)
/// event-handler attributes (`onload=`), `srcdoc=` (a page of its own, whose
/// markup is escaped), elements that embed a document of their own (`<iframe`,
/// `<frame`, `<object`, `<embed`: a `data:` URL's page or SVG runs its script
/// there), `<?xml-stylesheet` instructions that run an XSLT program (any type
/// but text/css) and `javascript:` or `vbscript:` URLs. Case is ignored, as
/// browsers ignore it; the order in which they appear does not matter.
///
/// An XML document may declare entities (`<!ENTITY a "java">`) and build a URL
/// or an element from references to them (`&a;&b;:`, or `&#60;script` in an
/// entity's value). The search does not expand them: in a file that declares
/// entities, a reference that may complete a script URL (next to another, to
/// a `:`, or to the start or end of "script") counts, as does a character
/// reference to `<`.
///
/// Browsers allow any number of blanks between an attribute's name and its `=`;
/// they decode character references in an attribute's value (`javascript&#58;`,
/// `java&Tab;script:`) and then drop every tab and line break from a URL; and an
/// XML prefix may be any length. So none of these checks may depend on the
/// window's look-behind: what the bytes before a window say for them is carried
/// from window to window (`Context`), a reference cut by a seam is read on in
/// the next window, and a finding does not depend on where the chunks fall.
/// ISO-2022-JP's switches to ASCII are taken out first (`ISO2022Escapes`).
struct MarkupScan {
    private var window = CarryWindow(lookBehind: 48, lookAhead: 16)
    private var escapes = ISO2022Escapes()
    private var context = Context()
    private(set) var sawScript = false
    private(set) var sawHTML = false
    private(set) var sawSVG = false
    private(set) var sawActiveAttribute = false
    private(set) var sawScriptURL = false
    private(set) var sawBuiltMarkup = false
    private(set) var sawEmbedding = false
    private(set) var sawStylesheetProgram = false

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        if escapes.isClear(chunk) {
            search(chunk)
        } else {
            escapes.strip(chunk).withUnsafeBytes { search($0) }
        }
    }

    private mutating func search(_ bytes: UnsafeRawBufferPointer) {
        var found = Found(context: context)
        window.feed(bytes) { found.visit($0, $1) }
        record(found)
    }

    mutating func finish() {
        let rest = escapes.rest()
        if !rest.isEmpty { rest.withUnsafeBytes { search($0) } }
        var found = Found(context: context, atFileEnd: true)
        window.finish { found.visit($0, $1) }
        record(found)
    }

    /// What the file so far ends with, for the checks that look back further than a window.
    struct Context {
        /// Whether its last bytes but blanks are an active attribute's name.
        var afterActiveName = false
        /// Whether it ends inside an element's opening name.
        var tagOpening = TagOpening.none
        /// Its last six characters as a URL holds them (references decoded, tabs
        /// and line breaks dropped, lowercased), the last in the lowest byte.
        var url: UInt64 = 0
        /// How many positions after the window's last were read already, by a
        /// reference that went on into the look-ahead.
        var resume = 0
        /// A reference cut by the end of the bytes, to be read on.
        var reference: CharacterReference?
        /// Whether the file so far declares an entity (`<!ENTITY`).
        var declaresEntities = false
        /// An `<?xml-stylesheet` instruction not ended yet.
        var stylesheet: StylesheetInstruction?
    }

    /// Where an element's opening name stands at the end of the bytes so far.
    enum TagOpening {
        case none
        /// Just after a `<`.
        case bracket
        /// After a `<` and one or more bytes of a name (a prefix, if a `:` follows).
        case prefix
    }

    private mutating func record(_ found: Found) {
        context = found.context
        sawScript = sawScript || found.script
        sawHTML = sawHTML || found.html
        sawSVG = sawSVG || found.svg
        sawActiveAttribute = sawActiveAttribute || found.activeAttribute
        sawScriptURL = sawScriptURL || found.scriptURL
        sawBuiltMarkup = sawBuiltMarkup || found.builtMarkup
        sawEmbedding = sawEmbedding || found.embedding
        sawStylesheetProgram = sawStylesheetProgram || found.stylesheetProgram
    }

    /// Whether the file is active content, given whether its head opens markup.
    func isActive(markupHead: Bool, htmlHead: Bool) -> Bool {
        sawScript || sawHTML || htmlHead || ((markupHead || sawSVG) && (sawActiveAttribute || sawScriptURL || sawBuiltMarkup || sawEmbedding || sawStylesheetProgram))
    }

    /// What one window's positions hold.
    struct Found {
        var script = false, html = false, svg = false, activeAttribute = false, scriptURL = false, builtMarkup = false, embedding = false
        var stylesheetProgram = false
        /// Where in the window the instruction in `context.stylesheet` is to be read on from (nil: the window's start).
        private var stylesheetNext: Int?
        /// What the file ends with before the window being visited; after it, once visited.
        var context = Context()
        /// Whether the window is the file's last, so that nothing follows its bytes.
        var atFileEnd = false
        /// The first position not yet read into `context.url`.
        private var done = 0

        init(context: Context, atFileEnd: Bool = false) {
            self.context = context
            self.atFileEnd = atFileEnd
        }

        /// Looks at the bytes that can start a finding, as the sieve
        /// (`airlock_markup_candidate`) picks them out: most bytes of most files
        /// are none of them.
        mutating func visit(_ bytes: UnsafeRawBufferPointer, _ positions: Range<Int>) {
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            done = positions.lowerBound + context.resume
            stylesheetNext = nil
            if var reference = context.reference {
                context.reference = nil
                settle(&reference, bytes, reference.resume(bytes, at: done, to: bytes.count, atFileEnd: atFileEnd))
            }
            var index = positions.lowerBound
            while true {
                index = airlock_markup_candidate(base, bytes.count, index, positions.upperBound, context.declaresEntities ? 1 : 0)
                guard index < positions.upperBound else { break }
                look(bytes, index, from: positions.lowerBound)
                index += 1
            }
            carry(bytes, positions)
        }

        /// What the byte at `index` may start; the window's positions start at `start`.
        @inline(__always) private mutating func look(_ bytes: UnsafeRawBufferPointer, _ index: Int, from start: Int) {
            switch bytes[index] {
            case UInt8(ascii: "<"):
                tag(bytes, index)
                if !context.declaresEntities, Found.declaresEntity(bytes, index) { context.declaresEntities = true }
                if StylesheetInstruction.opens(bytes, index) {
                    // One not ended by now takes this one in: its types are read with its own.
                    readStylesheet(bytes, upTo: index, from: start)
                    if context.stylesheet == nil {
                        context.stylesheet = StylesheetInstruction()
                        stylesheetNext = index
                    }
                }
            case UInt8(ascii: ":"):
                if Found.mayOpenElement(bytes, index), Found.endsPrefix(bytes, index, from: start, opening: context.tagOpening) {
                    tag(bytes, index)
                }
                if index >= done {
                    readURL(bytes, upTo: index)
                    push(UInt8(ascii: ":"))
                    done = index + 1
                }
            case UInt8(ascii: "&"):
                guard index >= done else { return }
                readURL(bytes, upTo: index)
                var reference = CharacterReference(entities: context.declaresEntities)
                settle(&reference, bytes, reference.resume(bytes, at: index + 1, to: bytes.count, atFileEnd: atFileEnd))
            case UInt8(ascii: "="):
                if !activeAttribute {
                    activeAttribute = Found.isActiveAttribute(bytes, index, from: start, afterActiveName: context.afterActiveName)
                }
            default: break
            }
        }

        /// Takes what reading `reference` on came to: a character, plain bytes, or
        /// (where the bytes ended first) a reference to read on in the next window.
        private mutating func settle(_ reference: inout CharacterReference, _ bytes: UnsafeRawBufferPointer,
                                     _ read: (CharacterReference.Step, next: Int)) {
            done = read.next
            switch read.0 {
            case .decoded(let character, let consumed):
                // In an entity's value, `&#60;` is a `<` that opens markup where the entity is used.
                if character == UInt8(ascii: "<"), context.declaresEntities { builtMarkup = true }
                push(character)
                // A `:` just after a reference without its `;` (`&#116:`): the sieve
                // passes a `:` after a `;` but not after every digit.
                if !consumed, done < bytes.count, bytes[done] == UInt8(ascii: ":") {
                    push(UInt8(ascii: ":"))
                    done += 1
                }
            case .plain: reference.forEachPlainByte { push($0) }
            case .more: context.reference = reference
            }
        }

        /// Brings `context.url` up to `end` over plain bytes, from the last six
        /// before it but tabs and line breaks (however many of those).
        private mutating func readURL(_ bytes: UnsafeRawBufferPointer, upTo end: Int) {
            guard end > done else { return }
            var last: UInt64 = 0, count = 0
            var position = end - 1
            while position >= done, count < 6 {
                let byte = bytes[position]
                position -= 1
                guard !Found.isDroppedFromURL(byte) else { continue }
                last |= UInt64(ByteText.lower(byte)) << (8 * count)
                count += 1
            }
            context.url = Found.keepSix(context.url << (8 * count) | last)
            done = end
        }

        /// Adds one character to the URL's, and notes a script URL where a `:` ends
        /// "script", or where an entity may complete one.
        private mutating func push(_ character: UInt8) {
            guard !Found.isDroppedFromURL(character) else { return }
            switch character {
            case UInt8(ascii: ":"):
                if context.url == Found.script || (context.declaresEntities && Found.endsEntityThenEndOfScript(context.url)) {
                    scriptURL = true
                }
            case CharacterReference.entity:
                if Found.endsEntityOrStartOfScript(context.url) { scriptURL = true }
            default: break
            }
            context.url = Found.keepSix(context.url << 8 | UInt64(ByteText.lower(character)))
        }

        /// "script" as `Context.url` holds it.
        static let script: UInt64 = "script".utf8.reduce(0) { $0 << 8 | UInt64($1) }

        @inline(__always) static func keepSix(_ characters: UInt64) -> UInt64 { characters & 0xFFFF_FFFF_FFFF }

        /// Brings `context` up to the end of the visited `positions`.
        private mutating func carry(_ bytes: UnsafeRawBufferPointer, _ positions: Range<Int>) {
            // As if an `=` came next: only blanks after an active attribute's name keep it in force.
            context.afterActiveName = Found.isActiveAttribute(bytes, positions.upperBound, from: positions.lowerBound,
                                                              afterActiveName: context.afterActiveName)
            context.tagOpening = Found.tagOpening(bytes, before: positions.upperBound, from: positions.lowerBound,
                                                  carried: context.tagOpening)
            if context.reference == nil { readURL(bytes, upTo: positions.upperBound) }
            context.resume = max(0, done - positions.upperBound)
            readStylesheet(bytes, upTo: positions.upperBound, from: positions.lowerBound)
        }

        /// Reads the pending `<?xml-stylesheet` instruction on up to `end`, and notes a program once it has ended.
        private mutating func readStylesheet(_ bytes: UnsafeRawBufferPointer, upTo end: Int, from start: Int) {
            guard var stylesheet = context.stylesheet else { return }
            let read = stylesheet.read(bytes, (stylesheetNext ?? start)..<end)
            stylesheetNext = end
            context.stylesheet = read == nil ? stylesheet : nil
            if read == true { stylesheetProgram = true }
        }

        private mutating func tag(_ bytes: UnsafeRawBufferPointer, _ index: Int) {
            if !script, Found.opens(bytes, index, "script") { script = true }
            if !html, Found.opens(bytes, index, "html") { html = true }
            if !svg, Found.opens(bytes, index, "svg") { svg = true }
            if !embedding {
                embedding = Found.opens(bytes, index, "iframe") || Found.opens(bytes, index, "frame")
                    || Found.opens(bytes, index, "object") || Found.opens(bytes, index, "embed")
            }
        }

        /// Whether the byte after `index` may start one of the elements `tag` looks for.
        @inline(__always) static func mayOpenElement(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Bool {
            guard index + 1 < bytes.count else { return false }
            switch ByteText.lower(bytes[index + 1]) {
            case UInt8(ascii: "s"), UInt8(ascii: "h"), UInt8(ascii: "i"), UInt8(ascii: "f"), UInt8(ascii: "o"), UInt8(ascii: "e"): return true
            default: return false
            }
        }

        /// Whether `<` (or a prefix's `:`) at `index` opens the element `name`: the name, then a space, `>` or `/`.
        static func opens(_ bytes: UnsafeRawBufferPointer, _ index: Int, _ name: StaticString) -> Bool {
            let count = name.utf8CodeUnitCount
            guard index + 1 + count < bytes.count else { return false }
            for offset in 0..<count where ByteText.lower(bytes[index + 1 + offset]) != name.utf8Start[offset] { return false }
            let after = bytes[index + 1 + count]
            return ByteText.isSpace(after) || after == UInt8(ascii: ">") || after == UInt8(ascii: "/")
        }

        /// Whether the `:` at `index` ends a namespace prefix of an element's
        /// opening name (`<x:script`), however long: a `<`, then one or more bytes
        /// of a name. Where the name reaches back past `start`, `opening` says
        /// what the bytes before it were.
        static func endsPrefix(_ bytes: UnsafeRawBufferPointer, _ index: Int, from start: Int = 0, opening: TagOpening = .none) -> Bool {
            var position = index - 1
            while position >= start, isNameByte(bytes[position]) { position -= 1 }
            let named = position < index - 1
            if position < start { return opening == .prefix || (named && opening == .bracket) }
            return named && bytes[position] == UInt8(ascii: "<")
        }

        /// Where an element's opening name stands just before `end`, given where
        /// it stood before `start`.
        static func tagOpening(_ bytes: UnsafeRawBufferPointer, before end: Int, from start: Int, carried: TagOpening) -> TagOpening {
            var position = end - 1
            while position >= start, isNameByte(bytes[position]) { position -= 1 }
            let named = position < end - 1
            if position < start { return named ? (carried == .none ? .none : .prefix) : carried }
            guard bytes[position] == UInt8(ascii: "<") else { return .none }
            return named ? .prefix : .bracket
        }

        /// The bytes of an XML name but `:`: ASCII letters and digits, `-`, `_`,
        /// `.`, and every byte of a character past ASCII.
        static func isNameByte(_ byte: UInt8) -> Bool {
            ByteText.isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte >= 0x80
        }

        /// Whether the `:` at `index` ends "script" (javascript:, vbscript:), with
        /// any tabs and line breaks among its letters, and no character references:
        /// the check one position at a time, for the sieve's test.
        static func endsWithScript(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Bool {
            var url: UInt64 = 0, count = 0
            var position = index - 1
            while position >= 0, count < 6 {
                if !isDroppedFromURL(bytes[position]) {
                    url |= UInt64(ByteText.lower(bytes[position])) << (8 * count)
                    count += 1
                }
                position -= 1
            }
            return url == script
        }

        /// Tabs and line breaks, which browsers drop from a URL wherever they stand.
        static func isDroppedFromURL(_ byte: UInt8) -> Bool { byte == 0x09 || byte == 0x0A || byte == 0x0D }

        /// Whether the `=` at `index` ends an active attribute: an event handler
        /// (`on` and at least two more letters) or `srcdoc`, after a space, a
        /// quote or `/`, before any number of spaces. When only spaces lie between
        /// `start` and the `=`, the file's earlier bytes decide (`afterActiveName`).
        static func isActiveAttribute(_ bytes: UnsafeRawBufferPointer, _ index: Int, from start: Int = 0,
                                      afterActiveName: Bool = false) -> Bool {
            var position = index - 1
            while position >= start, ByteText.isSpace(bytes[position]) { position -= 1 }
            return position < start ? afterActiveName : endsActiveName(bytes, position)
        }

        /// Whether the byte at `end` ends an active attribute's name.
        static func endsActiveName(_ bytes: UnsafeRawBufferPointer, _ end: Int) -> Bool {
            var position = end
            while position >= 0, end - position < 40, ByteText.isLetter(bytes[position]) { position -= 1 }
            let length = end - position
            guard length >= 4, position >= 0 else { return false }
            let before = bytes[position]
            guard ByteText.isSpace(before) || before == UInt8(ascii: "\"") || before == UInt8(ascii: "'") || before == UInt8(ascii: "/")
            else { return false }
            let name = (position + 1...end).lazy.map { ByteText.lower(bytes[$0]) }
            return name.starts(with: "on".utf8) || name.elementsEqual("srcdoc".utf8)
        }
    }
}

/// How a file's head shows markup: after a byte order mark and blank space, a `<`
/// at all, and one of the openings by which browsers sniff HTML (the WHATWG MIME
/// sniffing standard's list, without `<!--`, which XML shares).
enum MarkupHead {
    static let htmlOpenings = ["!doctype html", "html", "head", "script", "iframe", "h1", "div", "font", "table", "a", "style",
                               "title", "b", "body", "br", "p"].map { Array($0.utf8) }

    static func start(_ head: [UInt8]) -> ArraySlice<UInt8> {
        let text = head.starts(with: FileHead.byteOrderMark) ? head.dropFirst(3) : head[...]
        return text.drop { ByteText.isSpace($0) }
    }

    static func isMarkup(_ head: [UInt8]) -> Bool { start(head).first == UInt8(ascii: "<") }

    static func isHTML(_ head: [UInt8]) -> Bool {
        let start = start(head)
        guard start.first == UInt8(ascii: "<") else { return false }
        let rest = start.dropFirst().prefix(16).map(ByteText.lower)
        return htmlOpenings.contains { opening in
            guard rest.starts(with: opening), rest.count > opening.count else { return false }
            let after = rest[opening.count]
            return after == UInt8(ascii: " ") || after == UInt8(ascii: ">")
        }
    }
}
