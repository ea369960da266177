/// One JSON value (RFC 8259), parsed strictly from UTF-8 bytes: the reading side
/// of `JSONObjectWriter`, for messages between airlock's own processes. It is
/// what `JSONTreeDecoder` decodes from, so that a message is read through its
/// type's own `Decodable` conformance without Foundation's JSONDecoder, which
/// cost the supervisor ~3% of its CPU per keyed drop for one small verdict.
///
/// Refused: anything but one value with optional white space around it; bytes
/// that are not UTF-8; control characters, lone surrogates or unknown escapes
/// in strings; numbers outside the JSON grammar; nesting deeper than `maxDepth`.
/// A name given twice in one object keeps its first value, as Foundation's
/// JSONDecoder does (a test holds them to the same answer).
package enum JSONTree: Equatable, Sendable {
    case object([String: JSONTree])
    case array([JSONTree])
    case string(String)
    /// The number's text, exactly as written: each reader converts it to its own type.
    case number(String)
    case boolean(Bool)
    case null

    /// Deeper than any message airlock writes; bounds the parser's recursion.
    package static let maxDepth = 32

    /// Why bytes are not one JSON value.
    package struct SyntaxError: Error, CustomStringConvertible, Equatable {
        /// Offset of the byte where reading stopped.
        package let offset: Int
        package let problem: String

        package var description: String { "not JSON at byte \(offset): \(problem)" }
    }

    /// - Throws: `SyntaxError` for anything but one well-formed value.
    package init(parsing bytes: [UInt8]) throws(SyntaxError) {
        var reader = JSONTreeReader(bytes)
        reader.skipSpace()
        self = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.offset == bytes.count else { throw reader.failure("text after the value") }
    }
}

/// The recursive-descent reader behind `JSONTree(parsing:)`.
private struct JSONTreeReader {
    typealias SyntaxError = JSONTree.SyntaxError
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    func failure(_ problem: String) -> SyntaxError {
        SyntaxError(offset: offset, problem: problem)
    }

    var next: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    mutating func skipSpace() {
        while let byte = next, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
    }

    mutating func expect(_ byte: UInt8, _ problem: String) throws(SyntaxError) {
        guard next == byte else { throw failure(problem) }
        offset += 1
    }

    mutating func value(depth: Int) throws(SyntaxError) -> JSONTree {
        guard let byte = next else { throw failure("a value expected") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .boolean(true)
        case UInt8(ascii: "f"): try literal("false"); return .boolean(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("a value expected")
        }
    }

    mutating func literal(_ word: StaticString) throws(SyntaxError) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count,
              word.withUTF8Buffer({ bytes[offset..<offset + count].elementsEqual($0) }) else { throw failure("a value expected") }
        offset += count
    }

    mutating func object(depth: Int) throws(SyntaxError) -> JSONTree {
        guard depth <= JSONTree.maxDepth else { throw failure("nested deeper than \(JSONTree.maxDepth)") }
        offset += 1
        var fields: [String: JSONTree] = [:]
        skipSpace()
        if next == UInt8(ascii: "}") { offset += 1; return .object(fields) }
        while true {
            skipSpace()
            guard next == UInt8(ascii: "\"") else { throw failure("a name expected") }
            let name = try string()
            skipSpace()
            try expect(UInt8(ascii: ":"), "':' expected")
            skipSpace()
            let field = try value(depth: depth)
            if fields[name] == nil { fields[name] = field }
            skipSpace()
            if next == UInt8(ascii: ",") { offset += 1; continue }
            try expect(UInt8(ascii: "}"), "',' or '}' expected")
            return .object(fields)
        }
    }

    mutating func array(depth: Int) throws(SyntaxError) -> JSONTree {
        guard depth <= JSONTree.maxDepth else { throw failure("nested deeper than \(JSONTree.maxDepth)") }
        offset += 1
        var items: [JSONTree] = []
        skipSpace()
        if next == UInt8(ascii: "]") { offset += 1; return .array(items) }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            if next == UInt8(ascii: ",") { offset += 1; continue }
            try expect(UInt8(ascii: "]"), "',' or ']' expected")
            return .array(items)
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as written.
    mutating func number() throws(SyntaxError) -> String {
        let start = offset
        if next == UInt8(ascii: "-") { offset += 1 }
        if next == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard try digits() > 0 else { throw failure("a digit expected") }
        }
        if next == UInt8(ascii: ".") {
            offset += 1
            guard try digits() > 0 else { throw failure("a digit expected after '.'") }
        }
        if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            offset += 1
            if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { offset += 1 }
            guard try digits() > 0 else { throw failure("a digit expected in the exponent") }
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    mutating func digits() throws(SyntaxError) -> Int {
        let start = offset
        while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { offset += 1 }
        return offset - start
    }

    /// A string from its opening quote to its closing one, escapes resolved.
    mutating func string() throws(SyntaxError) -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        while true {
            guard let byte = next else { throw failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                try appendRun(from: runStart, to: &scalars)
                offset += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try appendRun(from: runStart, to: &scalars)
                offset += 1
                scalars.append(try escape())
                runStart = offset
            case 0x00..<0x20:
                throw failure("a control character in a string")
            default:
                offset += 1
            }
        }
    }

    /// Appends the unescaped bytes from `start` to here, refused unless UTF-8.
    func appendRun(from start: Int, to scalars: inout String.UnicodeScalarView) throws(SyntaxError) {
        guard start < offset else { return }
        guard let run = String(validating: bytes[start..<offset], as: UTF8.self) else { throw failure("not UTF-8") }
        scalars.append(contentsOf: run.unicodeScalars)
    }

    /// The scalar after a backslash; a surrogate pair's two escapes make one.
    mutating func escape() throws(SyntaxError) -> Unicode.Scalar {
        guard let byte = next else { throw failure("unterminated string") }
        offset += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(byte)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            if UTF16.isTrailSurrogate(unit) { throw failure("a lone low surrogate") }
            guard UTF16.isLeadSurrogate(unit) else { return Unicode.Scalar(unit)! }
            guard next == UInt8(ascii: "\\") else { throw failure("a lone high surrogate") }
            offset += 1
            guard next == UInt8(ascii: "u") else { throw failure("a lone high surrogate") }
            offset += 1
            let trail = try hexUnit()
            guard UTF16.isTrailSurrogate(trail) else { throw failure("a lone high surrogate") }
            let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(trail) - 0xDC00)
            return Unicode.Scalar(value)!
        default:
            throw failure("an unknown escape")
        }
    }

    mutating func hexUnit() throws(SyntaxError) -> UInt16 {
        guard offset + 4 <= bytes.count else { throw failure("four hex digits expected") }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("four hex digits expected")
            }
            unit = unit << 4 | UInt16(digit)
            offset += 1
        }
        return unit
    }
}
