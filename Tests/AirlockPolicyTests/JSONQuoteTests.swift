import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("JSONObjectWriter.quote: RFC 8259 escaping, the same with or without the fast path")
struct JSONQuoteTests {
    /// What RFC 8259 makes of one ASCII scalar inside a string: the five short
    /// escapes JSON writers use, `\u00xx` for the other control characters and
    /// DEL, the scalar itself otherwise.
    static func escaped(_ value: UInt32) -> String {
        let short: [UInt32: String] = [0x22: #"\""#, 0x5C: #"\\"#, 0x0A: #"\n"#, 0x0D: #"\r"#, 0x09: #"\t"#]
        if let escape = short[value] { return escape }
        guard value < 0x20 || value == 0x7F else { return String(Character(Unicode.Scalar(value)!)) }
        let hex = String(value, radix: 16)
        return #"\u"# + String(repeating: "0", count: 4 - hex.count) + hex
    }

    @Test("every ASCII scalar, alone and between other text: escaped exactly as RFC 8259 asks")
    func everyASCIIScalar() {
        for value in UInt32(0)...0x7F {
            let scalar = String(Character(Unicode.Scalar(value)!))
            let escape = Self.escaped(value)
            expectEqual(JSONObjectWriter.quote(scalar), "\"" + escape + "\"", "U+\(String(value, radix: 16))")
            expectEqual(JSONObjectWriter.quote("docs/" + scalar + "/é.txt"), "\"docs/" + escape + "/é.txt\"", "U+\(String(value, radix: 16))")
        }
        expectEqual(JSONObjectWriter.quote("a\u{7F}b"), "\"a\\u007fb\"")
        expectEqual(JSONObjectWriter.quote("tab\there"), "\"tab\\there\"")
    }

    @Test("text that needs no escaping, non-ASCII included, comes back between quotes unchanged")
    func nothingToEscape() {
        for text in ["", "docs/readme.txt", "e3b0c44298fc1c149afbf4c8996fb924", "名前/ファイル.txt", "\u{2028}\u{200D}é", "emoji 🧪"] {
            expectEqual(JSONObjectWriter.quote(text), "\"" + text + "\"")
        }
    }

    @Test("an object of every kind of field, nested objects and arrays included, is written in the order added")
    func objectText() {
        var file = JSONObjectWriter()
        file.add("entry", "a\"b")
        file.add("entry_size", Int64(-7))
        file.add("classes", strings: ["text", "x"])
        var object = JSONObjectWriter()
        expectEqual(object.text, "{}")
        object.add("ok", true)
        object.add("none", strings: [String]())
        object.add("files", objects: [file, JSONObjectWriter(), file])
        object.add("pairs", strings: [("k", "v\n"), ("é", "")])
        object.add("no", false)
        expectEqual(object.text, #"{"ok":true,"none":[],"files":[{"entry":"a\"b","entry_size":-7,"classes":["text","x"]},{},"#
                    + #"{"entry":"a\"b","entry_size":-7,"classes":["text","x"]}],"pairs":{"k":"v\n","é":""},"no":false}"#)
    }
}
