@testable import AirlockPolicy
import Foundation
import Testing

@Suite("JSONTree and JSONTreeDecoder: strict JSON, read the way Foundation's JSONDecoder reads it")
struct JSONTreeTests {
    /// Texts both readers take, and texts both refuse.
    static let valid = [
        "{}", "[]", "0", "-0", "12", "-3.25e+2", "1E5", "true", "false", "null", " \t\r\n{ \"a\" : [ 1 , \"x\" ] }\n",
        #""\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00""#, #"{"a":{"b":{"c":[[[]]]}}}"#, "\"caf\u{E9} \u{1F600}\"",
    ]
    static let invalid = [
        "", " ", "{", "}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e", "+1", "0x10", "tru", "nul",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\u{01}b\"", "{} {}", "[1] x",
        "'a'", "NaN", "Infinity",
    ]
    /// Refused here though Foundation's reader lets them through: RFC 8259 has no
    /// trailing commas, and airlock's writer never writes one.
    static let lenientInFoundation = ["[1,]", "{\"a\":1,}"]

    @Test("what JSONSerialization reads, this reads; what it refuses, this refuses")
    func agreesOnSyntax() {
        for text in Self.valid {
            #expect((try? JSONTree(parsing: Array(text.utf8))) != nil, "\(text)")
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil, "\(text)")
        }
        for text in Self.invalid {
            #expect(throws: JSONTree.SyntaxError.self, "\(text)") { try JSONTree(parsing: Array(text.utf8)) }
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) == nil, "\(text)")
        }
        for text in Self.lenientInFoundation {
            #expect(throws: JSONTree.SyntaxError.self, "\(text)") { try JSONTree(parsing: Array(text.utf8)) }
        }
    }

    @Test("bytes that are not UTF-8 are refused, in names and values alike")
    func notUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x7B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x3A, 0x31, 0x7D]] {
            #expect(throws: JSONTree.SyntaxError.self) { try JSONTree(parsing: bytes) }
        }
    }

    @Test("strings and numbers come out as written, escapes resolved")
    func values() throws {
        #expect(try JSONTree(parsing: Array(#"{"a":[1,-2.5e3,"\u00e9\ud83d\ude00\/"],"b":null,"c":true}"#.utf8))
            == .object(["a": .array([.number("1"), .number("-2.5e3"), .string("é😀/")]), "b": .null, "c": .boolean(true)]))
    }

    @Test("nesting is bounded")
    func depth() {
        let deep = { (levels: Int) in Array((String(repeating: "[", count: levels) + String(repeating: "]", count: levels)).utf8) }
        #expect((try? JSONTree(parsing: deep(JSONTree.maxDepth))) != nil)
        #expect(throws: JSONTree.SyntaxError.self) { try JSONTree(parsing: deep(JSONTree.maxDepth + 1)) }
        #expect(throws: JSONTree.SyntaxError.self) { try JSONTree(parsing: deep(100_000)) }
    }

    struct Sample: Decodable, Equatable {
        var text: String
        var count: Int64
        var small: Int32?
        var flag: Bool
        var ratio: Double?
        var names: [String: String]?
        var list: [Int]?
    }

    /// The result of each decoder: the value, or that it threw.
    static func both(_ text: String) -> (Sample?, Sample?) {
        (try? JSONTreeDecoder.decode(Sample.self, from: Array(text.utf8)), try? JSONDecoder().decode(Sample.self, from: Data(text.utf8)))
    }

    @Test("a value decodes, or fails to, exactly as JSONDecoder decodes it", arguments: [
        #"{"text":"a","count":3,"flag":true}"#,
        #"{"text":"a","count":-9223372036854775808,"small":2147483647,"flag":false,"ratio":0.5,"names":{"x":"y"},"list":[1,2]}"#,
        #"{"text":"a","count":3,"flag":true,"small":null,"ratio":null,"names":null,"list":null,"other":[{}]}"#,
        #"{"text":"a","count":3,"flag":true,"ratio":7}"#,
        #"{"text":"a","count":3,"flag":true,"text":"b"}"#,
        #"{"text":"a","count":3}"#,
        #"{"text":"a","count":"3","flag":true}"#,
        #"{"text":"a","count":3.5,"flag":true}"#,
        #"{"text":"a","count":1e40,"flag":true}"#,
        #"{"text":"a","count":9223372036854775808,"flag":true}"#,
        #"{"text":"a","count":3,"small":2147483648,"flag":true}"#,
        #"{"text":"a","count":3,"flag":1}"#,
        #"{"text":"a","count":3,"flag":"true"}"#,
        #"{"text":1,"count":3,"flag":true}"#,
        #"{"text":null,"count":3,"flag":true}"#,
        #"{"text":"a","count":3,"flag":true,"names":{"x":1}}"#,
        #"{"text":"a","count":3,"flag":true,"names":["x"]}"#,
        #"{"text":"a","count":3,"flag":true,"list":[1,"2"]}"#,
        #"{"text":"a","count":3,"flag":true,"list":{}}"#,
        #"["text"]"#,
        "null",
    ])
    func agreesWithJSONDecoder(_ text: String) {
        let (tree, foundation) = Self.both(text)
        #expect(tree == foundation, "\(text)")
    }
}
