import AirlockKeyed
import AirlockTestSupport
import Foundation
import Testing

@Suite("Property-list values: what Foundation's reader returns, typed once")
struct PropertyListValueTests {
    /// The value Foundation's reader returns for `body`, the inside of a `<plist>`.
    static func read(_ body: String, format: PropertyListSerialization.PropertyListFormat = .xml) throws -> Any {
        let xml = Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\">\(body)</plist>".utf8)
        let read = try PropertyListSerialization.propertyList(from: xml, options: [], format: nil)
        guard format == .binary else { return read }
        let binary = try PropertyListSerialization.data(fromPropertyList: read, format: .binary, options: 0)
        return try PropertyListSerialization.propertyList(from: binary, options: [], format: nil)
    }

    static let formats: [PropertyListSerialization.PropertyListFormat] = [.xml, .binary]

    @Test("each property-list type becomes its own case, from XML and binary alike", arguments: formats)
    func eachType(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let cases: [(String, PropertyListValue)] = [
            ("<string>naïve ☕</string>", .string("naïve ☕")),
            ("<integer>-5</integer>", .integer(-5)),
            ("<integer>18446744073709551615</integer>", .largeInteger(UInt64.max)),
            ("<real>1.5</real>", .real(1.5)),
            ("<true/>", .boolean(true)),
            ("<false/>", .boolean(false)),
            ("<data>AAH/</data>", .data(Data([0, 1, 255]))),
            ("<date>2020-01-01T00:00:00Z</date>", .date(Date(timeIntervalSince1970: 1_577_836_800))),
            ("<array><integer>1</integer><string>a</string></array>", .array([.integer(1), .string("a")])),
            ("<dict><key>k</key><false/></dict>", .dictionary(["k": .boolean(false)])),
        ]
        for (body, expected) in cases {
            expectEqual(PropertyListValue(try Self.read(body, format: format)), expected, "\(body)")
        }
    }

    @Test("nested containers convert all the way down")
    func nested() throws {
        let value = PropertyListValue(try Self.read(
            "<dict><key>a</key><array><dict><key>b</key><array><integer>7</integer><true/></array></dict></array></dict>"))
        expectEqual(value, .dictionary(["a": .array([.dictionary(["b": .array([.integer(7), .boolean(true)])])])]))
        expectEqual(value.dictionaryValue?["a"]?.arrayValue?.first?.dictionaryValue?["b"]?.arrayValue?.first?.integerValue, 7)
    }

    @Test("a boolean is never an integer, and 0 and 1 are never booleans", arguments: formats)
    func booleanIsNotInteger(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let truth = PropertyListValue(try Self.read("<true/>", format: format))
        let one = PropertyListValue(try Self.read("<integer>1</integer>", format: format))
        let zero = PropertyListValue(try Self.read("<integer>0</integer>", format: format))
        expectEqual(truth, .boolean(true))
        expectEqual(truth.integerValue, nil)
        expectEqual(one, .integer(1))
        expectEqual(zero, .integer(0))
        expectEqual(one.integerValue, 1)
    }

    @Test("a real is an integer exactly when Foundation's as? Int says so")
    func realAsInteger() throws {
        for text in ["1.0", "1.5", "-0.0", "1e300", "3"] {
            let read = try Self.read("<real>\(text)</real>")
            expect(PropertyListValue(read).integerValue == read as? Int, "\(text)")
        }
        expectEqual(PropertyListValue(try Self.read("<integer>18446744073709551615</integer>")).integerValue, nil)
    }

    @Test("an integer is an Int exactly when Foundation's as? Int says so, at every width's edges", arguments: formats)
    func integerAsInt(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let edges = ["0", "1", "-1", "127", "128", "255", "256", "32767", "32768", "65535", "65536", "-32769", "2147483647",
                     "2147483648", "4294967295", "4294967296", "-2147483649", "9223372036854775807", "-9223372036854775808",
                     "9223372036854775808", "18446744073709551615"]
        for text in edges {
            let read = try Self.read("<integer>\(text)</integer>", format: format)
            let value = PropertyListValue(read)
            expect(value.integerValue == read as? Int, "\(text)")
            if read as? Int == nil { expectEqual(value, .largeInteger(UInt64(text)!), "\(text)") }
        }
    }

    @Test("a UID object, from either reader, is a reference with its index", arguments: formats)
    func uid(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let value = PropertyListValue(try Self.read("<array><dict><key>CF$UID</key><integer>42</integer></dict></array>", format: format))
        expectEqual(value, .array([.uid(42)]))
        expectEqual(value.arrayValue?.first?.uidValue, 42)
    }

    @Test("a UID in a keyed archive is the archiver's own object, and its type name is the one Foundation gives")
    func archiverUID() throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: ["a"] as NSArray, requiringSecureCoding: false)
        let read = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        let top = try #require(read as? [String: Any])
        let reference = try #require((top["$top"] as? [String: Any])?["root"])
        expectEqual(PropertyListValue(reference), .uid(1))
        expectEqual(PropertyListValue(reference).foundationTypeName, "\(type(of: reference))")
        expectEqual(PropertyListValue(top["$objects"] as Any).arrayValue?.count, (top["$objects"] as? [Any])?.count)
    }

    @Test("the type name of each case is the type Foundation's reader returns for it")
    func foundationTypeNames() throws {
        for body in ["<string>s</string>", "<integer>1</integer>", "<real>1.5</real>", "<true/>", "<data>AA==</data>",
                     "<date>2020-01-01T00:00:00Z</date>", "<array/>", "<dict><key>k</key><string>v</string></dict>"] {
            let array = try #require(try Self.read("<array>\(body)</array>") as? [Any])
            expectEqual(PropertyListValue(array[0]).foundationTypeName, "\(type(of: array[0]))", "\(body)")
        }
    }

    @Test("Foundation's readers refuse deep nesting, which bounds the conversion's recursion")
    func nestingBound() throws {
        func xml(_ depth: Int) -> String { String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) }
        func levels(_ object: Any) -> Int {
            var value = PropertyListValue(object)
            var count = 0
            while let inner = value.arrayValue?.first { value = inner; count += 1 }
            return count
        }
        let binary = { (depth: Int) in try PropertyListSerialization.propertyList(from: try Self.binaryNestedArrays(depth: depth), options: [], format: nil) }
        expectEqual(levels(try Self.read(xml(100))), 99)
        expectEqual(levels(try binary(100)), 99)
        #expect(throws: (any Error).self) { try Self.read(xml(600)) }
        #expect(throws: (any Error).self) { try binary(600) }
    }

    /// A binary property list of `depth` arrays, each holding the next (object
    /// `i` holds object `i + 1`), written directly: Foundation's writer would
    /// recurse as deep.
    static func binaryNestedArrays(depth: Int) throws -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for index in 0..<depth {
            offsets.append(bytes.count)
            if index == depth - 1 {
                bytes.append(0xA0)
            } else {
                bytes += [0xA1, UInt8((index + 1) >> 8), UInt8((index + 1) & 0xFF)]
            }
        }
        let table = bytes.count
        for offset in offsets { bytes += [UInt8(offset >> 8), UInt8(offset & 0xFF)] }
        // Trailer: offset size 2, reference size 2, object count, top object 0, table offset.
        bytes += [0, 0, 0, 0, 0, 0, 2, 2]
        for field in [depth, 0, table] { bytes += withUnsafeBytes(of: UInt64(field).bigEndian, Array.init) }
        return Data(bytes)
    }

    @Test("a dictionary with one CF$UID key is a reference; with another key beside it, it is not")
    func uidDictionary() {
        expectEqual(PropertyListValue.dictionary(["CF$UID": .integer(3)]).uidValue, 3)
        expectEqual(PropertyListValue.dictionary(["CF$UID": .boolean(true)]).uidValue, nil)
        expectEqual(PropertyListValue.dictionary(["CF$UID": .integer(3), "x": .integer(1)]).uidValue, nil)
        expectEqual(PropertyListValue.integer(3).uidValue, nil)
    }

    @Test("a value that is no property-list type is kept by its type name")
    func other() {
        struct Stranger {}
        expectEqual(PropertyListValue(Stranger()), .other(typeName: "Stranger"))
        expectEqual(PropertyListValue([1: "a"] as [Int: String]), .other(typeName: "Dictionary<Int, String>"))
    }

    @Test("a value written and read back is the same value, UIDs included", arguments: formats)
    func writeAndRead(_ format: PropertyListSerialization.PropertyListFormat) throws {
        let value = PropertyListValue.dictionary([
            "$top": .dictionary(["root": .uid(1)]),
            "$objects": .array([.string("$null"), .dictionary(["n": .integer(-3), "r": .real(2.5), "b": .boolean(false)]),
                                .data(Data([9])), .date(Date(timeIntervalSince1970: 0)), .largeInteger(UInt64.max)]),
        ])
        let data = try value.propertyListData(format: format)
        expectEqual(PropertyListValue(try PropertyListSerialization.propertyList(from: data, options: [], format: nil)), value)
        #expect(throws: CocoaError.self) { try PropertyListValue.other(typeName: "Stranger").propertyListData(format: format) }
    }
}
