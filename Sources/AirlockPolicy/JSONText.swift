/// A minimal JSON object writer for the decoder child, which does not load
/// Foundation. Strings are escaped per RFC 8259; nothing else is supported.
public struct JSONObjectWriter: Sendable {
    private var fields: [String] = []

    public init() {}

    public mutating func add(_ key: String, _ value: String) {
        fields.append(JSONObjectWriter.quote(key) + ":" + JSONObjectWriter.quote(value))
    }

    public mutating func add(_ key: String, _ value: Int64) {
        fields.append(JSONObjectWriter.quote(key) + ":" + String(value))
    }

    public mutating func add(_ key: String, _ value: Bool) {
        fields.append(JSONObjectWriter.quote(key) + ":" + (value ? "true" : "false"))
    }

    /// An array of objects, each already written.
    public mutating func add(_ key: String, objects: [JSONObjectWriter]) {
        fields.append(JSONObjectWriter.quote(key) + ":[" + objects.map(\.text).joined(separator: ",") + "]")
    }

    /// An array of strings, in the order given.
    public mutating func add(_ key: String, strings values: [String]) {
        fields.append(JSONObjectWriter.quote(key) + ":[" + values.map(JSONObjectWriter.quote).joined(separator: ",") + "]")
    }

    /// A nested object of string values, in the order given.
    public mutating func add(_ key: String, strings pairs: [(String, String)]) {
        let body = pairs.map { JSONObjectWriter.quote($0.0) + ":" + JSONObjectWriter.quote($0.1) }.joined(separator: ",")
        fields.append(JSONObjectWriter.quote(key) + ":{" + body + "}")
    }

    public var text: String { "{" + fields.joined(separator: ",") + "}" }

    public static func quote(_ value: String) -> String {
        // Most strings (names, hashes, types) hold nothing to escape: then the
        // text is the value between quotes. Every scalar escaped below is ASCII,
        // one byte in UTF-8 that no longer scalar's bytes can equal, so looking at
        // the bytes finds exactly those scalars.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) {
            return "\"" + value + "\""
        }
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
}
