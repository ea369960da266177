import AirlockKeyed
import AirlockPolicy
import AirlockTestSupport
import Foundation
import Testing

@Suite("Keyed archives: round trips through Foundation's archiver and airlock's decoder")
struct KeyedRoundTripTests {
    let decoder = KeyedDecoder(settings: KeyedSettings())

    @Test("a memo written with a stable class name decodes to identical fields", arguments: [
        PropertyListSerialization.PropertyListFormat.binary, .xml,
    ])
    func single(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let data = try StableArchive.memos([ArchivedMemo(schema: 1, text: "naïve café ☕ \u{1F600}")], asArray: false, format: format)
        expectEqual(decoder.decode(data), .memo(ArchivedMemoValue(schema: 1, text: "naïve café ☕ \u{1F600}")))
    }

    @Test("an array of memos decodes in order")
    func array() throws {
        let memos = (0..<25).map { ArchivedMemo(schema: 1, text: "memo \($0)") }
        let data = try StableArchive.memos(memos, asArray: true)
        expectEqual(decoder.decode(data), .memos((0..<25).map { ArchivedMemoValue(schema: 1, text: "memo \($0)") }))
    }

    @Test("the archived class name is the chosen one, never the Swift module's")
    func stableName() throws {
        let data = try StableArchive.memos([ArchivedMemo(schema: 1, text: "x")], asArray: false, className: "NotesApp.Memo")
        let text = String(decoding: try PropertyListSerialization.data(
            fromPropertyList: PropertyListSerialization.propertyList(from: data, format: nil), format: .xml, options: 0), as: UTF8.self)
        expect(text.contains("NotesApp.Memo"))
        expect(!text.contains("AirlockKeyed"))
        expectEqual(decoder.decode(data), .rejected(.unknownClass, "the archive names class \"NotesApp.Memo\", which is not configured"))
        var settings = KeyedSettings()
        settings.classNames = ["NotesApp.Memo"]
        expectEqual(KeyedDecoder(settings: settings).decode(data), .memo(ArchivedMemoValue(schema: 1, text: "x")))
    }

    @Test("text of exactly 4,096 UTF-16 units passes and 4,097 does not")
    func textLimit() throws {
        let ok = try StableArchive.memos([ArchivedMemo(schema: 1, text: String(repeating: "a", count: 4096))], asArray: false)
        expectEqual(decoder.decode(ok), .memo(ArchivedMemoValue(schema: 1, text: String(repeating: "a", count: 4096))))
        let long = try StableArchive.memos([ArchivedMemo(schema: 1, text: String(repeating: "a", count: 4097))], asArray: false)
        guard case .rejected(.invalidField, _) = decoder.decode(long) else {
            Issue.record("4,097 units were accepted")
            return
        }
    }
}

/// UTF-16 units to put where a placeholder stood in a Foundation-written binary archive.
struct SurrogateCase: CustomTestStringConvertible, Sendable {
    let name: String
    /// Replaces the two placeholders U+E000 U+E001 (written as UTF-16, big-endian).
    let units: (UInt16, UInt16)
    let accepted: Bool

    var testDescription: String { name }

    static let all = [
        SurrogateCase(name: "a lone high surrogate", units: (0xD800, 0x0062), accepted: false),
        SurrogateCase(name: "a lone low surrogate", units: (0x0062, 0xDC00), accepted: false),
        SurrogateCase(name: "a reversed pair", units: (0xDC00, 0xD800), accepted: false),
        SurrogateCase(name: "two high surrogates", units: (0xD800, 0xDBFF), accepted: false),
        SurrogateCase(name: "a valid pair", units: (0xD83D, 0xDE00), accepted: true),
    ]
}

@Suite("Keyed text is refused, never repaired, where Foundation's reader would change it")
struct KeyedTextTests {
    let decoder = KeyedDecoder(settings: KeyedSettings())

    /// A Foundation-written memo archive whose text is "x" + the two units + "y".
    func archive(_ units: (UInt16, UInt16)) throws -> Data {
        let data = try StableArchive.memos([ArchivedMemo(schema: 1, text: "x\u{E000}\u{E001}y")], asArray: false)
        var bytes = [UInt8](data)
        let placeholder: [UInt8] = [0xE0, 0x00, 0xE0, 0x01]
        let at = try #require((0...(bytes.count - 4)).first { Array(bytes[$0..<$0 + 4]) == placeholder })
        bytes[at..<at + 4] = [UInt8(units.0 >> 8), UInt8(units.0 & 0xFF), UInt8(units.1 >> 8), UInt8(units.1 & 0xFF)]
        return Data(bytes)
    }

    @Test("surrogates in a binary archive's text: only a well-formed pair passes", arguments: SurrogateCase.all)
    func surrogates(_ item: SurrogateCase) throws {
        let outcome = decoder.decode(try archive(item.units))
        if item.accepted {
            expectEqual(outcome, .memo(ArchivedMemoValue(schema: 1, text: "x\u{1F600}y")))
        } else {
            guard case .rejected(.invalidField, let detail) = outcome else {
                Issue.record("\(item.name): \(outcome)")
                return
            }
            expect(detail.contains("surrogate"), "\(detail)")
        }
    }

    @Test("a memo's text keeps its NFD spelling through decoding")
    func decomposedText() throws {
        let text = "cafe\u{301}"
        let outcome = decoder.decode(try StableArchive.memos([ArchivedMemo(schema: 1, text: text)], asArray: false))
        guard case .memo(let memo) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        expectEqual(Array(memo.text.unicodeScalars), Array(text.unicodeScalars))
        expect(memo != ArchivedMemoValue(schema: 1, text: "caf\u{E9}"), "an NFC spelling is different text")
    }
}
