/// An `<?xml-stylesheet …?>` processing instruction, read as it streams past.
/// One that names an XSLT stylesheet makes a browser run it over the document
/// and show what it builds, script elements included (`<xsl:element
/// name="script">` holds no `<script` for a search to see): Chromium still
/// does, Firefox too. Only a `type="text/css"` instruction styles and does
/// nothing more; any other type, or none, counts as a program. An instruction
/// longer than `limit` without its `?>` counts too: it cannot be read whole.
struct StylesheetInstruction {
    static let limit = 1024
    private var text: [UInt8] = []

    /// Whether the `<` at `index` opens one (`<?xml-stylesheet` and a blank).
    static func opens(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Bool {
        ByteText.isFollowed(bytes, after: index, byWordAndBlank: "?xml-stylesheet")
    }

    /// Adds the instruction's next bytes; once it has ended (or grown past
    /// `limit`), whether it names a program rather than CSS. Nil while it goes on.
    mutating func read(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool? {
        for index in range {
            text.append(bytes[index])
            if text.count > 3, text[text.count - 2] == UInt8(ascii: "?"), bytes[index] == UInt8(ascii: ">") {
                return !Self.isCSS(text)
            }
            if text.count > Self.limit { return true }
        }
        return nil
    }

    /// Whether every `type` pseudo-attribute of `text` (there must be one) is `text/css`.
    static func isCSS(_ text: [UInt8]) -> Bool {
        let lowered = text.map(ByteText.lower)
        var types = 0
        var index = 0
        let name = Array("type".utf8)
        while index + name.count <= lowered.count {
            defer { index += 1 }
            guard lowered[index..<index + name.count].elementsEqual(name), index > 0, ByteText.isSpace(lowered[index - 1]) else { continue }
            var position = index + name.count
            while position < lowered.count, ByteText.isSpace(lowered[position]) { position += 1 }
            guard position < lowered.count, lowered[position] == UInt8(ascii: "=") else { continue }
            position += 1
            while position < lowered.count, ByteText.isSpace(lowered[position]) { position += 1 }
            guard position < lowered.count, lowered[position] == UInt8(ascii: "\"") || lowered[position] == UInt8(ascii: "'") else { return false }
            let quote = lowered[position]
            guard let close = lowered[(position + 1)...].firstIndex(of: quote),
                  lowered[(position + 1)..<close].elementsEqual("text/css".utf8) else { return false }
            types += 1
        }
        return types > 0
    }
}
