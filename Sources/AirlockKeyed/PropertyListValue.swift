import Foundation

/// One property-list value, typed: what `PropertyListSerialization` returns,
/// converted once, so the checks of a keyed archive ask a value what it is
/// instead of casting untyped objects at each step.
///
/// The conversion keeps the distinctions swift-corelibs-foundation's reader makes
/// and the checks rely on: a boolean arrives as `Bool` (an NSNumber whose ObjC
/// type is "c") and is never an integer; an integer too large for `Int` (a binary
/// list holds unsigned 64-bit ones) stays a number that is not an `Int`; a UID is
/// an internal `_NSKeyedArchiverUID` object whose only stored value is `value`,
/// and the XML reader turns a `{"CF$UID": n}` dictionary into one too.
///
/// The conversion recurses into containers; that is bounded because both of
/// Foundation's readers refuse a list nested deeper than about 512 levels
/// ("Too many nested arrays or dictionaries" from the XML reader, a read error
/// from the binary one), before anything here runs.
package enum PropertyListValue: Equatable {
    case dictionary([String: PropertyListValue])
    case array([PropertyListValue])
    case string(String)
    case integer(Int)
    /// An integer above `Int.max`.
    case largeInteger(UInt64)
    case real(Double)
    case boolean(Bool)
    case data(Data)
    case date(Date)
    /// An object reference (`CF$UID`).
    case uid(Int)
    /// Anything else the reader returned, by its Swift type name: a dictionary
    /// with a key that is not a string, a UID whose value cannot be read.
    case other(typeName: String)

    /// The value of what `PropertyListSerialization` returned.
    ///
    /// The containers and strings are tried first, the classes last: asked whether
    /// a Swift array, dictionary or string is an `NSNumber`, the runtime first
    /// bridges the whole value to its Foundation class (an `NSDictionary` of the
    /// `$objects` table, in every child), only to find it is not one. The kinds are
    /// disjoint, so the order changes nothing but the cost.
    package init(_ object: Any) {
        if let text = object as? String {
            self = .string(text)
        } else if let list = object as? [Any] {
            self = .array(list.map(PropertyListValue.init))
        } else if let fields = object as? [String: Any] {
            self = .dictionary(fields.mapValues(PropertyListValue.init))
        } else if let reference = PropertyListValue.uidValue(object) {
            self = .uid(reference)
        } else if let number = object as? NSNumber {
            self = PropertyListValue(number: number)
        } else if let bytes = object as? Data {
            self = .data(bytes)
        } else if let date = object as? Date {
            self = .date(date)
        } else {
            self = .other(typeName: "\(type(of: object))")
        }
    }

    /// Booleans and numbers both bridge to NSNumber (and `is Bool` holds for both on
    /// Linux): a boolean is the one whose ObjC type is "c". A real is "d" or "f";
    /// every other number is an integer, and only an unsigned one ("Q", which
    /// Foundation reports only above `Int64.max`) can fail to fit an `Int`. Read
    /// this way rather than with `as? Int`, which costs a bridging cast for each of
    /// the up to a million numbers a list can hold; the type code is one character,
    /// read in place.
    private init(number: NSNumber) {
        let type = number.objCType
        let code = type[0] != 0 && type[1] == 0 ? UInt8(bitPattern: type[0]) : 0
        switch code {
        case UInt8(ascii: "c"): self = .boolean(number.boolValue)
        case UInt8(ascii: "d"), UInt8(ascii: "f"): self = .real(number.doubleValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"), UInt8(ascii: "S"), UInt8(ascii: "C"):
            let value = number.uint64Value
            self = value <= UInt64(Int.max) ? .integer(Int(value)) : .largeInteger(value)
        default: self = .integer(number.intValue)
        }
    }

    /// The class of Foundation's UID objects, learnt once from a keyed archive
    /// Foundation writes itself (the class is internal to swift-corelibs-foundation);
    /// nil should that ever fail, and the class is then known by its name.
    private static let archiverUIDType: ObjectIdentifier? = {
        guard let data = try? NSKeyedArchiver.archivedData(withRootObject: "" as NSString, requiringSecureCoding: false),
              let top = (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) as? [String: Any],
              let root = (top["$top"] as? [String: Any])?["root"],
              String(describing: type(of: root)).hasSuffix("KeyedArchiverUID") else { return nil }
        return ObjectIdentifier(type(of: root))
    }()

    /// The value of Foundation's UID object, read through reflection. The class is
    /// recognised by its identity, not by formatting its name for every object.
    private static func uidValue(_ object: Any) -> Int? {
        if let uidType = archiverUIDType {
            guard ObjectIdentifier(type(of: object)) == uidType else { return nil }
        } else {
            guard String(describing: type(of: object)).hasSuffix("KeyedArchiverUID") else { return nil }
        }
        for child in Mirror(reflecting: object).children where child.label == "value" {
            if let number = child.value as? UInt32 { return Int(number) }
            if let number = child.value as? Int { return number }
            if let number = child.value as? UInt64 { return Int(exactly: number) }
        }
        return nil
    }
}

extension PropertyListValue {
    package var dictionaryValue: [String: PropertyListValue]? {
        if case .dictionary(let fields) = self { return fields }
        return nil
    }

    package var arrayValue: [PropertyListValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value as an `Int` where Foundation's `as? Int` gives one: an integer that
    /// fits, or a real with an exact integral value (a schema of `1.0` is schema 1);
    /// never a boolean.
    package var integerValue: Int? {
        switch self {
        case .integer(let value): return value
        case .real(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The index a reference names: a UID, or a dictionary whose one key is
    /// `CF$UID` holding an integer (the XML spelling, should a reader keep it).
    package var uidValue: Int? {
        switch self {
        case .uid(let index): return index
        case .dictionary(let fields) where fields.count == 1: return fields["CF$UID"]?.integerValue
        default: return nil
        }
    }

    /// The Swift type name Foundation's reader gives this value, as rejection
    /// details have always worded a value of an unexpected kind.
    package var foundationTypeName: String {
        switch self {
        case .dictionary: return "Dictionary<AnyHashable, Any>"
        case .array: return "Array<Any>"
        case .string: return "String"
        case .integer, .largeInteger, .real: return "NSNumber"
        case .boolean: return "Bool"
        case .data: return "Data"
        case .date: return "Date"
        case .uid: return "_NSKeyedArchiverUID"
        case .other(let typeName): return typeName
        }
    }
}
