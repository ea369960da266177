import AirlockConfiguration
import AirlockTestSupport
import Foundation
import Testing

@Suite("JSON values: what Foundation's reader returns, typed once")
struct JSONValueTests {
    static func read(_ text: String) throws -> JSONValue {
        JSONValue(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
    }

    @Test("true and false are booleans; 0, 1 and reals are numbers")
    func booleansAndNumbers() throws {
        guard case .boolean(true) = try Self.read("true") else { Issue.record("true"); return }
        guard case .boolean(false) = try Self.read("false") else { Issue.record("false"); return }
        for text in ["0", "1", "-7", "1.5", "0.1"] {
            guard case .number(let number) = try Self.read(text) else { Issue.record("\(text) is not a number"); continue }
            let read = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? NSNumber
            expectEqual(number, read, "\(text)")
            expectEqual("\(number)", read.map { "\($0)" }, "\(text)")
        }
    }

    @Test("strings, null, and nested arrays and objects keep their shape")
    func nested() throws {
        guard case .object(let top) = try Self.read(#"{"a": ["x", null, {"b": 2}], "s": "t"}"#),
              case .array(let list)? = top["a"], list.count == 3,
              case .string("x") = list[0], case .null = list[1],
              case .object(let inner) = list[2], case .number(let two)? = inner["b"], two.intValue == 2,
              case .string("t")? = top["s"] else {
            Issue.record("the nested value lost its shape")
            return
        }
    }
}
