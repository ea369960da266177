import AirlockPolicy
import AirlockSystem
import Foundation

/// The accepted record as JSON in staging (`memo.json` or `memos.json`), written
/// with the staging writer, then read back and compared with the decoded values.
///
/// Format (version 1):
/// `{"format": "airlock-memo", "version": 1, "memo": {"schema": 1, "text": "…"}}`, or
/// `{"format": "airlock-memo", "version": 1, "memos": [{"index": 0, "schema": 1, "text": "…"}, …]}`.
enum MemoRendering {
    static let version = 1

    struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }

    static func fileName(forArray: Bool) -> String { forArray ? "memos.json" : "memo.json" }

    /// The rendered file, one definition for the writer and the reader.
    struct Document: Codable {
        var format = "airlock-memo"
        var version = MemoRendering.version
        var memo: Record?
        var memos: [Record]?
    }

    struct Record: Codable {
        var index: Int?
        var schema: Int
        var text: String
    }

    static func render(_ memos: [ArchivedMemoValue], asArray: Bool) throws -> Data {
        var document = Document()
        if asArray {
            document.memos = memos.enumerated().map { Record(index: $0.offset, schema: $0.element.schema, text: $0.element.text) }
        } else {
            document.memo = Record(index: nil, schema: memos[0].schema, text: memos[0].text)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try encoder.encode(document) + Data("\n".utf8)
    }

    /// Parses what `render` wrote and checks every field against `memos`.
    static func verify(_ data: Data, _ memos: [ArchivedMemoValue], asArray: Bool) throws {
        guard let document = try? JSONDecoder().decode(Document.self, from: data),
              document.format == "airlock-memo", document.version == version else {
            throw Mismatch(description: "the rendered file does not read back as airlock-memo version \(version)")
        }
        let records = (asArray ? document.memos : document.memo.map { [$0] }) ?? []
        guard records.count == memos.count else {
            throw Mismatch(description: "read back \(records.count) records, decoded \(memos.count)")
        }
        for (index, (record, memo)) in zip(records, memos).enumerated() {
            // Compared scalar for scalar: String's == holds for canonically equivalent
            // spellings too, and a rendering that renormalised the text changed it.
            guard record.schema == memo.schema, Array(record.text.unicodeScalars) == Array(memo.text.unicodeScalars),
                  !asArray || record.index == index else {
                throw Mismatch(description: "record \(index) reads back differently from what was decoded")
            }
        }
    }
}
