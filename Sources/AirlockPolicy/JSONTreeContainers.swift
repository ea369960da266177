/// The fields of a JSON object, read by the caller's keys.
struct JSONTreeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [String: JSONTree]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { fields.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    private func field(_ key: Key) throws -> JSONTree {
        guard let tree = fields[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return tree
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { try field(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(type, try field(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(type, try field(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(type, try field(key), path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(type, try field(key), path(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(type, try field(key), path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(type, try field(key), path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(type, try field(key), path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(type, try field(key), path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(type, try field(key), path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try scalar(type, try field(key), path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try scalar(type, try field(key), path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try scalar(type, try field(key), path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try scalar(type, try field(key), path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try scalar(type, try field(key), path(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decodeValue(type, try field(key), path(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try JSONTreeDecoder(try field(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONTreeDecoder(try field(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONTreeDecoder(fields["super"] ?? .null, codingPath: codingPath + [JSONTreeIndexKey(stringValue: "super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONTreeDecoder(fields[key.stringValue] ?? .null, codingPath: path(key))
    }
}

/// The items of a JSON array, read in order.
struct JSONTreeUnkeyedContainer: UnkeyedDecodingContainer {
    let items: [JSONTree]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(items: [JSONTree], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    /// The next item and its path; the index moves on only once it has been decoded.
    private func item<T>(_ type: T.Type) throws -> (JSONTree, [any CodingKey]) {
        let path = codingPath + [JSONTreeIndexKey(intValue: currentIndex)]
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "Unkeyed container is at end."))
        }
        return (items[currentIndex], path)
    }

    private mutating func next<T>(_ type: T.Type, _ read: (JSONTree, [any CodingKey]) throws -> T) throws -> T {
        let (tree, path) = try item(type)
        let value = try read(tree, path)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        let (tree, _) = try item(Never.self)
        guard tree == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try scalar(type, $0, $1) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try decodeValue(type, $0, $1) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try JSONTreeDecoder($0, codingPath: $1).container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try JSONTreeDecoder($0, codingPath: $1).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { JSONTreeDecoder($0, codingPath: $1) }
    }
}
