import AirlockPolicy
import Testing

@Suite("JSONObjectWriter.quote: RFC 8259 escaping, the same with or without the fast path")
struct JSONQuoteTests {
    /// The escaping one scalar at a time, as RFC 8259 asks.
    static func reference(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    @Test("every ASCII scalar, alone and between other text: escaped exactly where the reference escapes it")
    func everyASCIIScalar() {
        for value in UInt32(0)...0x7F {
            let scalar = Character(Unicode.Scalar(value)!)
            for text in [String(scalar), "docs/" + String(scalar) + "/é.txt"] {
                #expect(JSONObjectWriter.quote(text) == Self.reference(text), "U+\(String(value, radix: 16))")
            }
        }
        #expect(JSONObjectWriter.quote("a\u{7F}b") == "\"a\\u007fb\"")
        #expect(JSONObjectWriter.quote("tab\there") == "\"tab\\there\"")
    }

    @Test("text that needs no escaping, non-ASCII included, comes back between quotes unchanged")
    func nothingToEscape() {
        for text in ["", "docs/readme.txt", "e3b0c44298fc1c149afbf4c8996fb924", "名前/ファイル.txt", "\u{2028}\u{200D}é", "emoji 🧪"] {
            #expect(JSONObjectWriter.quote(text) == "\"" + text + "\"")
            #expect(JSONObjectWriter.quote(text) == Self.reference(text))
        }
    }
}
