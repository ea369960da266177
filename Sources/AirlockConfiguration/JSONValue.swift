import Foundation

/// One JSON value, typed: what `JSONSerialization` returns, converted once, so the
/// configuration reader asks a value what it is instead of casting untyped objects.
///
/// Numbers and booleans both arrive as NSNumber (and `is Bool` holds for both on
/// Linux): a boolean is the one whose ObjC type is "c". A number is kept as the
/// NSNumber the reader made, so a message quotes it exactly as it was read.
package enum JSONValue {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case boolean(Bool)
    case number(NSNumber)
    case null

    /// The value of what `JSONSerialization` returned; anything it does not
    /// return for a JSON value (it gives NSNull for `null`) is `null` too.
    package init(_ object: Any) {
        if let number = object as? NSNumber {
            self = String(cString: number.objCType) == "c" ? .boolean(number.boolValue) : .number(number)
        } else if let text = object as? String {
            self = .string(text)
        } else if let list = object as? [Any] {
            self = .array(list.map(JSONValue.init))
        } else if let fields = object as? [String: Any] {
            self = .object(fields.mapValues(JSONValue.init))
        } else {
            self = .null
        }
    }
}
