import CAirlockSieve

/// Looks through a whole file, as it streams past, for what makes markup
/// active: a `<script` element or an `<html` document anywhere (which is how a
/// GIF or JPEG that is also an HTML page shows itself), and in markup (HTML,
/// XHTML, SVG, any XML) event-handler attributes (`onload=`) and `javascript:`
/// or `vbscript:` URLs. Case is ignored, as browsers ignore it; the order in
/// which they appear does not matter.
///
/// Browsers allow any number of blanks between an attribute's name and its `=`,
/// and drop every tab and line break from a URL, so neither check may depend on
/// the window's look-behind: what the bytes before a window say for them is
/// carried from window to window (`Context`), and a finding does not depend on
/// where the chunks fall.
struct MarkupScan {
    private var window = CarryWindow(lookBehind: 48, lookAhead: 16)
    private var context = Context()
    private(set) var sawScript = false
    private(set) var sawHTML = false
    private(set) var sawSVG = false
    private(set) var sawHandler = false
    private(set) var sawScriptURL = false

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        var found = Found(context: context)
        window.feed(chunk) { found.visit($0, $1) }
        record(found)
    }

    mutating func finish() {
        var found = Found(context: context)
        window.finish { found.visit($0, $1) }
        record(found)
    }

    /// What the file so far ends with, for the checks that look back further than a window.
    struct Context {
        /// Whether its last bytes but blanks are an event-handler attribute's name.
        var afterHandlerName = false
        /// Its last six bytes but tabs and line breaks, lowercased.
        var scriptTail: [UInt8] = []
    }

    private mutating func record(_ found: Found) {
        context = found.context
        sawScript = sawScript || found.script
        sawHTML = sawHTML || found.html
        sawSVG = sawSVG || found.svg
        sawHandler = sawHandler || found.handler
        sawScriptURL = sawScriptURL || found.scriptURL
    }

    /// Whether the file is active content, given whether its head opens markup.
    func isActive(markupHead: Bool, htmlHead: Bool) -> Bool {
        sawScript || sawHTML || htmlHead || ((markupHead || sawSVG) && (sawHandler || sawScriptURL))
    }

    /// What one window's positions hold.
    struct Found {
        var script = false, html = false, svg = false, handler = false, scriptURL = false
        /// What the file ends with before the window being visited; after it, once visited.
        var context = Context()

        /// Looks at the bytes that can start a finding, as the sieve
        /// (`airlock_markup_candidate`) picks them out: most bytes of most files
        /// are none of them.
        mutating func visit(_ bytes: UnsafeRawBufferPointer, _ positions: Range<Int>) {
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            var index = positions.lowerBound
            while true {
                index = airlock_markup_candidate(base, bytes.count, index, positions.upperBound)
                guard index < positions.upperBound else { break }
                look(bytes, index, from: positions.lowerBound)
                index += 1
            }
            carry(bytes, positions)
        }

        /// What the byte at `index` may start; the window's positions start at `start`.
        @inline(__always) private mutating func look(_ bytes: UnsafeRawBufferPointer, _ index: Int, from start: Int) {
            switch bytes[index] {
            case UInt8(ascii: "<"): tag(bytes, index)
            case UInt8(ascii: ":"):
                if !scriptURL { scriptURL = Found.endsWithScript(bytes, index, from: start, after: context.scriptTail) }
            case UInt8(ascii: "="):
                if !handler { handler = Found.isHandler(bytes, index, from: start, afterHandlerName: context.afterHandlerName) }
            default: break
            }
        }

        /// Brings `context` up to the end of the visited `positions`.
        private mutating func carry(_ bytes: UnsafeRawBufferPointer, _ positions: Range<Int>) {
            // As if an `=` came next: only blanks after a handler's name keep it in force.
            context.afterHandlerName = Found.isHandler(bytes, positions.upperBound, from: positions.lowerBound,
                                                       afterHandlerName: context.afterHandlerName)
            var tail: [UInt8] = []
            var position = positions.upperBound - 1
            while position >= positions.lowerBound, tail.count < 6 {
                let byte = ByteText.lower(bytes[position])
                position -= 1
                if !Found.isDroppedFromURL(byte) { tail.append(byte) }
            }
            context.scriptTail = Array((context.scriptTail + tail.reversed()).suffix(6))
        }

        private mutating func tag(_ bytes: UnsafeRawBufferPointer, _ index: Int) {
            if !script, Found.opens(bytes, index, "script") { script = true }
            if !html, Found.opens(bytes, index, "html") { html = true }
            if !svg, Found.opens(bytes, index, "svg") { svg = true }
        }

        /// Whether `<` at `index` opens the element `name`: the name, then a space, `>` or `/`.
        static func opens(_ bytes: UnsafeRawBufferPointer, _ index: Int, _ name: StaticString) -> Bool {
            let count = name.utf8CodeUnitCount
            guard index + 1 + count < bytes.count else { return false }
            for offset in 0..<count where ByteText.lower(bytes[index + 1 + offset]) != name.utf8Start[offset] { return false }
            let after = bytes[index + 1 + count]
            return ByteText.isSpace(after) || after == UInt8(ascii: ">") || after == UInt8(ascii: "/")
        }

        /// Whether the letters before a `:` end with "script" (javascript:, vbscript:),
        /// skipping the tabs and line breaks a browser strips from a URL, however
        /// many. Before `start`, the bytes are `tail`'s (the file's earlier bytes
        /// but tabs and line breaks).
        static func endsWithScript(_ bytes: UnsafeRawBufferPointer, _ index: Int, from start: Int = 0, after tail: [UInt8] = []) -> Bool {
            let word: StaticString = "tpircs"
            let count = word.utf8CodeUnitCount
            var matched = 0
            var position = index - 1
            while position >= start, matched < count {
                let byte = ByteText.lower(bytes[position])
                position -= 1
                if isDroppedFromURL(byte) { continue }
                guard byte == word.utf8Start[matched] else { return false }
                matched += 1
            }
            for byte in tail.reversed() where matched < count {
                guard byte == word.utf8Start[matched] else { return false }
                matched += 1
            }
            return matched == count
        }

        /// Tabs and line breaks, which browsers drop from a URL wherever they stand.
        static func isDroppedFromURL(_ byte: UInt8) -> Bool { byte == 0x09 || byte == 0x0A || byte == 0x0D }

        /// Whether the `=` at `index` ends an event-handler attribute: `on` and at
        /// least two more letters, after a space, a quote or `/`, before any number
        /// of spaces. When only spaces lie between `start` and the `=`, the file's
        /// earlier bytes decide (`afterHandlerName`).
        static func isHandler(_ bytes: UnsafeRawBufferPointer, _ index: Int, from start: Int = 0, afterHandlerName: Bool = false) -> Bool {
            var position = index - 1
            while position >= start, ByteText.isSpace(bytes[position]) { position -= 1 }
            return position < start ? afterHandlerName : endsHandlerName(bytes, position)
        }

        /// Whether the byte at `end` ends an event-handler attribute's name.
        static func endsHandlerName(_ bytes: UnsafeRawBufferPointer, _ end: Int) -> Bool {
            var position = end
            while position >= 0, end - position < 40, ByteText.isLetter(bytes[position]) { position -= 1 }
            let length = end - position
            guard length >= 4, position >= 0 else { return false }
            let before = bytes[position]
            guard ByteText.isSpace(before) || before == UInt8(ascii: "\"") || before == UInt8(ascii: "'") || before == UInt8(ascii: "/")
            else { return false }
            return ByteText.lower(bytes[position + 1]) == UInt8(ascii: "o") && ByteText.lower(bytes[position + 2]) == UInt8(ascii: "n")
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
