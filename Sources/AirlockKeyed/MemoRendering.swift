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

    /// The rendered file as the reader sees it: `render` writes these fields, and
    /// `verify` reads them back through Foundation's JSON reader.
    struct Document: Decodable {
        var format = "airlock-memo"
        var version = MemoRendering.version
        var memo: Record?
        var memos: [Record]?
    }

    struct Record: Decodable {
        var index: Int?
        var schema: Int
        var text: String
    }

    /// The file's bytes: those Foundation's JSON writer makes of a `Document` with
    /// sorted keys, pretty-printed (MemoRenderingTests pins them to it), written
    /// directly. The generic writer spent a fifteenth of each keyed child's CPU on
    /// this one small object.
    static func render(_ memos: [ArchivedMemoValue], asArray: Bool) throws -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(memos.reduce(128) { $0 + 64 + $1.text.utf8.count })
        out.append(contentsOf: "{\n  \"format\" : \"airlock-memo\",\n".utf8)
        if asArray {
            out.append(contentsOf: "  \"memos\" : [".utf8)
            for (index, memo) in memos.enumerated() {
                out.append(contentsOf: (index == 0 ? "\n    {\n" : ",\n    {\n").utf8)
                out.append(contentsOf: "      \"index\" : \(index),\n".utf8)
                append(memo, indent: "      ", to: &out)
                out.append(contentsOf: "    }".utf8)
            }
            out.append(contentsOf: (memos.isEmpty ? "\n\n  ],\n" : "\n  ],\n").utf8)
        } else {
            out.append(contentsOf: "  \"memo\" : {\n".utf8)
            append(memos[0], indent: "    ", to: &out)
            out.append(contentsOf: "  },\n".utf8)
        }
        out.append(contentsOf: "  \"version\" : \(version)\n}\n".utf8)
        return Data(out)
    }

    /// A record's schema and text lines, keys sorted, at `indent`.
    private static func append(_ memo: ArchivedMemoValue, indent: String, to out: inout [UInt8]) {
        out.append(contentsOf: "\(indent)\"schema\" : \(memo.schema),\n\(indent)\"text\" : \"".utf8)
        appendEscaped(memo.text, to: &out)
        out.append(contentsOf: "\"\n".utf8)
    }

    /// `text`'s UTF-8 as Foundation's writer escapes it inside quotes: quotation
    /// mark, reverse solidus and solidus after a backslash; backspace, form feed,
    /// line feed, carriage return and tab by their letters; every other control
    /// character as `\u00xx` (lower-case hex); everything else, DEL and non-ASCII
    /// included, as it is.
    private static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case 0x22, 0x5C, 0x2F: out += [0x5C, byte]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0x00..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
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
