/// Decodes a `Decodable` value from a `JSONTree` through the value's own
/// `init(from:)`, as Foundation's JSONDecoder does with its default strategies:
/// a key's absence or `null` is nil for `decodeIfPresent`, an integer type takes
/// only an integer literal that fits it, a floating-point type any number, a
/// string only a JSON string, a Bool only `true` or `false`. Mismatches throw
/// the `DecodingError` JSONDecoder would.
package struct JSONTreeDecoder: Decoder {
    let tree: JSONTree
    package let codingPath: [any CodingKey]
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ tree: JSONTree, codingPath: [any CodingKey]) {
        self.tree = tree
        self.codingPath = codingPath
    }

    /// The value of `type` in `bytes`.
    /// - Throws: `JSONTree.SyntaxError` for bytes that are not JSON, `DecodingError`
    ///   for JSON that is not such a value, or whatever the type's `init(from:)` throws.
    package static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try T(from: JSONTreeDecoder(try JSONTree(parsing: bytes), codingPath: []))
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let fields) = tree else { throw mismatch([String: Any].self, tree, codingPath) }
        return KeyedDecodingContainer(JSONTreeKeyedContainer<Key>(fields: fields, codingPath: codingPath))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = tree else { throw mismatch([Any].self, tree, codingPath) }
        return JSONTreeUnkeyedContainer(items: items, codingPath: codingPath)
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer {
        JSONTreeSingleValue(tree: tree, codingPath: codingPath)
    }
}

func mismatch(_ type: Any.Type, _ tree: JSONTree, _ path: [any CodingKey]) -> DecodingError {
    let found: String
    switch tree {
    case .object: found = "a dictionary"
    case .array: found = "an array"
    case .string: found = "a string"
    case .number: found = "a number"
    case .boolean: found = "a bool"
    case .null: found = "null"
    }
    return .typeMismatch(type, .init(codingPath: path, debugDescription: "Expected to decode \(type) but found \(found) instead."))
}

/// One value as a type the standard library's containers ask for by name.
func scalar<T>(_ type: T.Type, _ tree: JSONTree, _ path: [any CodingKey]) throws -> T {
    switch tree {
    case .null:
        throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Expected \(type) value but found null instead."))
    case .boolean(let value) where type == Bool.self:
        return value as! T
    case .string(let value) where type == String.self:
        return value as! T
    case .number(let text) where type != Bool.self && type != String.self:
        if let value = number(type, text) { return value }
        throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "Number \(text) does not fit in \(type)."))
    default:
        throw mismatch(type, tree, path)
    }
}

/// `text`, a JSON number, as `type` when it is a numeric type and the number fits.
private func number<T>(_ type: T.Type, _ text: String) -> T? {
    switch type {
    case is Double.Type: return Double(text) as! T?
    case is Float.Type: return Float(text) as! T?
    case is Int.Type: return Int(text) as! T?
    case is Int8.Type: return Int8(text) as! T?
    case is Int16.Type: return Int16(text) as! T?
    case is Int32.Type: return Int32(text) as! T?
    case is Int64.Type: return Int64(text) as! T?
    case is UInt.Type: return UInt(text) as! T?
    case is UInt8.Type: return UInt8(text) as! T?
    case is UInt16.Type: return UInt16(text) as! T?
    case is UInt32.Type: return UInt32(text) as! T?
    case is UInt64.Type: return UInt64(text) as! T?
    default: return nil
    }
}

/// Whether the standard library's containers can ask for `type` by name.
private func isScalar(_ type: Any.Type) -> Bool {
    type == Bool.self || type == String.self || type == Double.self || type == Float.self || type == Int.self
        || type == Int8.self || type == Int16.self || type == Int32.self || type == Int64.self || type == UInt.self
        || type == UInt8.self || type == UInt16.self || type == UInt32.self || type == UInt64.self
}

/// A value of any `Decodable` type: a scalar directly, anything else through its `init(from:)`.
func decodeValue<T: Decodable>(_ type: T.Type, _ tree: JSONTree, _ path: [any CodingKey]) throws -> T {
    if isScalar(type) { return try scalar(type, tree, path) }
    return try T(from: JSONTreeDecoder(tree, codingPath: path))
}

/// A coding key for an array index or a name no `CodingKey` type of the caller's spells.
struct JSONTreeIndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

struct JSONTreeSingleValue: SingleValueDecodingContainer {
    let tree: JSONTree
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { tree == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try scalar(type, tree, codingPath) }
    func decode(_ type: String.Type) throws -> String { try scalar(type, tree, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try scalar(type, tree, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { try scalar(type, tree, codingPath) }
    func decode(_ type: Int.Type) throws -> Int { try scalar(type, tree, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type, tree, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type, tree, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type, tree, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type, tree, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try scalar(type, tree, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type, tree, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type, tree, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type, tree, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type, tree, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type, tree, codingPath) }
}
