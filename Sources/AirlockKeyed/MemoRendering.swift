import AirlockPolicy
import AirlockSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

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

    static func render(_ memos: [ArchivedMemoValue], asArray: Bool) throws -> Data {
        func record(_ memo: ArchivedMemoValue, index: Int?) -> [String: Any] {
            var object: [String: Any] = ["schema": memo.schema, "text": memo.text]
            if let index { object["index"] = index }
            return object
        }
        var document: [String: Any] = ["format": "airlock-memo", "version": version]
        if asArray {
            document["memos"] = memos.enumerated().map { record($0.element, index: $0.offset) }
        } else {
            document["memo"] = record(memos[0], index: nil)
        }
        return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .prettyPrinted]) + Data("\n".utf8)
    }

    /// Parses what `render` wrote and checks every field against `memos`.
    static func verify(_ data: Data, _ memos: [ArchivedMemoValue], asArray: Bool) throws {
        guard let document = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              document["format"] as? String == "airlock-memo", document["version"] as? Int == version else {
            throw Mismatch(description: "the rendered file does not read back as airlock-memo version \(version)")
        }
        let records: [[String: Any]]
        if asArray {
            records = (document["memos"] as? [[String: Any]]) ?? []
        } else {
            records = (document["memo"] as? [String: Any]).map { [$0] } ?? []
        }
        guard records.count == memos.count else {
            throw Mismatch(description: "read back \(records.count) records, decoded \(memos.count)")
        }
        for (index, (record, memo)) in zip(records, memos).enumerated() {
            // Compared scalar for scalar: String's == holds for canonically equivalent
            // spellings too, and a rendering that renormalised the text changed it.
            guard record["schema"] as? Int == memo.schema,
                  (record["text"] as? String).map({ Array($0.unicodeScalars) }) == Array(memo.text.unicodeScalars),
                  !asArray || record["index"] as? Int == index else {
                throw Mismatch(description: "record \(index) reads back differently from what was decoded")
            }
        }
    }
}
