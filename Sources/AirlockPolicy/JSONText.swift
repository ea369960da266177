/// A minimal JSON object writer for the decoder child, which does not load
/// Foundation. Strings are escaped per RFC 8259; nothing else is supported.
///
/// The object's text grows in one string as fields are added: a manifest adds
/// thousands of them, and a string per field, joined at the end, cost a
/// manifest of a thousand files more than its hashing did.
public struct JSONObjectWriter: Sendable {
    /// The fields so far, comma-separated, without the braces.
    private var body = ""

    public init() {}

    public mutating func add(_ key: String, _ value: String) {
        startField(key)
        JSONObjectWriter.appendQuoted(value, to: &body)
    }

    public mutating func add(_ key: String, _ value: Int64) {
        startField(key)
        body += String(value)
    }

    public mutating func add(_ key: String, _ value: Bool) {
        startField(key)
        body += value ? "true" : "false"
    }

    /// An array of objects, each already written.
    public mutating func add(_ key: String, objects: [JSONObjectWriter]) {
        startField(key)
        body.reserveCapacity(body.utf8.count + objects.reduce(2) { $0 + $1.body.utf8.count + 3 })
        body += "["
        for (position, object) in objects.enumerated() {
            if position > 0 { body += "," }
            body += "{"
            body += object.body
            body += "}"
        }
        body += "]"
    }

    /// An array of strings, in the order given.
    public mutating func add(_ key: String, strings values: [String]) {
        startField(key)
        body += "["
        for (position, value) in values.enumerated() {
            if position > 0 { body += "," }
            JSONObjectWriter.appendQuoted(value, to: &body)
        }
        body += "]"
    }

    /// A nested object of string values, in the order given.
    public mutating func add(_ key: String, strings pairs: [(String, String)]) {
        startField(key)
        body += "{"
        for (position, pair) in pairs.enumerated() {
            if position > 0 { body += "," }
            JSONObjectWriter.appendQuoted(pair.0, to: &body)
            body += ":"
            JSONObjectWriter.appendQuoted(pair.1, to: &body)
        }
        body += "}"
    }

    public var text: String { "{" + body + "}" }

    public static func quote(_ value: String) -> String {
        var out = ""
        appendQuoted(value, to: &out)
        return out
    }

    private mutating func startField(_ key: String) {
        if !body.isEmpty { body += "," }
        JSONObjectWriter.appendQuoted(key, to: &body)
        body += ":"
    }

    private static func appendQuoted(_ value: String, to out: inout String) {
        out += "\""
        // Most strings (names, hashes, types) hold nothing to escape: then the
        // text is the value between quotes. Every scalar escaped below is ASCII,
        // one byte in UTF-8 that no longer scalar's bytes can equal, so looking at
        // the bytes finds exactly those scalars.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }) {
            out += value
            out += "\""
            return
        }
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
        out += "\""
    }
}
