import AirlockKeyed
import AirlockPolicy
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
        #expect(decoder.decode(data) == .memo(ArchivedMemoValue(schema: 1, text: "naïve café ☕ \u{1F600}")))
    }

    @Test("an array of memos decodes in order")
    func array() throws {
        let memos = (0..<25).map { ArchivedMemo(schema: 1, text: "memo \($0)") }
        let data = try StableArchive.memos(memos, asArray: true)
        #expect(decoder.decode(data) == .memos((0..<25).map { ArchivedMemoValue(schema: 1, text: "memo \($0)") }))
    }

    @Test("the archived class name is the chosen one, never the Swift module's")
    func stableName() throws {
        let data = try StableArchive.memos([ArchivedMemo(schema: 1, text: "x")], asArray: false, className: "NotesApp.Memo")
        let text = String(decoding: try PropertyListSerialization.data(
            fromPropertyList: PropertyListSerialization.propertyList(from: data, format: nil), format: .xml, options: 0), as: UTF8.self)
        #expect(text.contains("NotesApp.Memo"))
        #expect(!text.contains("AirlockKeyed"))
        #expect(decoder.decode(data) == .rejected(.unknownClass, "the archive names class \"NotesApp.Memo\", which is not configured"))
        var settings = KeyedSettings()
        settings.classNames = ["NotesApp.Memo"]
        #expect(KeyedDecoder(settings: settings).decode(data) == .memo(ArchivedMemoValue(schema: 1, text: "x")))
    }

    @Test("text of exactly 4,096 UTF-16 units passes and 4,097 does not")
    func textLimit() throws {
        let ok = try StableArchive.memos([ArchivedMemo(schema: 1, text: String(repeating: "a", count: 4096))], asArray: false)
        #expect(decoder.decode(ok) == .memo(ArchivedMemoValue(schema: 1, text: String(repeating: "a", count: 4096))))
        let long = try StableArchive.memos([ArchivedMemo(schema: 1, text: String(repeating: "a", count: 4097))], asArray: false)
        guard case .rejected(.invalidField, _) = decoder.decode(long) else {
            Issue.record("4,097 units were accepted")
            return
        }
    }
}
