@testable import AirlockKeyed
import AirlockTestSupport
import Foundation
import Testing

/// The rendered memo file, one type written and read.
@Suite("Memo rendering: typed, and the bytes the generic writer made")
struct MemoRenderingTests {
    /// Every ASCII scalar, separators JSON writers treat specially, a combining
    /// sequence and an astral scalar.
    static let awkwardText: String = {
        var text = ""
        for value in Array(0..<0x80) + [0x85, 0x2028, 0x2029, 0xFEFF, 0x1F600, 0xE9] { text.unicodeScalars.append(Unicode.Scalar(value)!) }
        return text + "e\u{301}/"
    }()

    /// What the renderer wrote when it built a dictionary for the generic JSON writer.
    private func generic(_ memos: [ArchivedMemoValue], asArray: Bool) throws -> Data {
        func record(_ memo: ArchivedMemoValue, index: Int?) -> NSDictionary {
            let object = NSMutableDictionary(dictionary: ["schema": memo.schema, "text": memo.text])
            if let index { object["index"] = index }
            return object
        }
        let document = NSMutableDictionary(dictionary: ["format": "airlock-memo", "version": 1])
        if asArray {
            document["memos"] = memos.enumerated().map { record($0.element, index: $0.offset) }
        } else {
            document["memo"] = record(memos[0], index: nil)
        }
        return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .prettyPrinted]) + Data("\n".utf8)
    }

    @Test("a rendered memo file is byte for byte what it was, and reads back as the memos", arguments: [false, true])
    func memoBytes(_ asArray: Bool) throws {
        let memos = asArray ? [ArchivedMemoValue(schema: 1, text: Self.awkwardText), ArchivedMemoValue(schema: 1, text: "")]
                            : [ArchivedMemoValue(schema: 1, text: Self.awkwardText)]
        let rendered = try MemoRendering.render(memos, asArray: asArray)
        expectEqual(rendered, (try generic(memos, asArray: asArray)))
        try MemoRendering.verify(rendered, memos, asArray: asArray)
    }

    @Test("no records, many records and schemas of every width render as the generic writer renders them")
    func recordCounts() throws {
        let cases: [[ArchivedMemoValue]] = [
            [],
            (0..<12).map { ArchivedMemoValue(schema: $0 - 6, text: String(repeating: "\\/\"", count: $0)) },
            [ArchivedMemoValue(schema: Int.min, text: "\u{0}"), ArchivedMemoValue(schema: Int.max, text: "\u{7F}\u{80}")],
        ]
        for memos in cases {
            let rendered = try MemoRendering.render(memos, asArray: true)
            expectEqual(rendered, (try generic(memos, asArray: true)), "\(memos.count) records")
            try MemoRendering.verify(rendered, memos, asArray: true)
            if let first = memos.first {
                try expectEqual(MemoRendering.render([first], asArray: false), (try generic([first], asArray: false)))
            }
        }
    }

    @Test("a rendering whose text was renormalised, or of another version, does not verify")
    func memoMismatch() throws {
        let memos = [ArchivedMemoValue(schema: 1, text: "e\u{301}")]
        let changed = try MemoRendering.render([ArchivedMemoValue(schema: 1, text: "\u{E9}")], asArray: false)
        #expect(throws: MemoRendering.Mismatch.self) { try MemoRendering.verify(changed, memos, asArray: false) }
        let other = Data(#"{"format":"airlock-memo","version":2,"memo":{"schema":1,"text":"e\u0301"}}"#.utf8)
        #expect(throws: MemoRendering.Mismatch.self) { try MemoRendering.verify(other, memos, asArray: false) }
    }
}
