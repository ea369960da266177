import AirlockPolicy
import Foundation

/// Checks a keyed archive's object graph, as a property list, before
/// NSKeyedUnarchiver sees it.
///
/// swift-corelibs-foundation's unarchiver does not fail gracefully: a class
/// outside the allowed set is a `fatalError` ("Value was of unexpected class"),
/// so is a record whose `init(coder:)` fails, and an object reference past the
/// object table traps too. Each of those would be a `decoder-failed` with no
/// reason an operator can act on. So the root, its class, the item count and
/// every Memo's fields are judged here first, each with its own reason; the
/// unarchiver then decodes a graph already known to be of the expected shape.
struct KeyedStructure {
    let objects: [Any]
    let settings: KeyedSettings

    enum Shape: Equatable {
        case memo
        case memos(Int)
    }

    struct Refusal: Error, Equatable {
        let reason: Reason
        let detail: String
        init(_ reason: Reason, _ detail: String) {
            self.reason = reason
            self.detail = detail
        }
    }

    /// The value of a UID (`CF$UID`). Foundation on Linux hands them out as an
    /// internal class whose only stored value is `value`; an XML reader may give a
    /// `{"CF$UID": n}` dictionary.
    static func uid(_ value: Any) -> Int? {
        if let dictionary = value as? [String: Any], dictionary.count == 1, let number = dictionary["CF$UID"] as? Int { return number }
        guard String(describing: type(of: value)).hasSuffix("KeyedArchiverUID") else { return nil }
        for child in Mirror(reflecting: value).children where child.label == "value" {
            if let number = child.value as? UInt32 { return Int(number) }
            if let number = child.value as? Int { return number }
            if let number = child.value as? UInt64 { return Int(exactly: number) }
        }
        return nil
    }

    /// Booleans and numbers both arrive as NSNumber (and `is Bool` holds for both on
    /// Linux): a boolean is the one whose ObjC type is "c".
    static func isBoolean(_ value: Any) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    func object(_ reference: Any, _ what: String) throws(Refusal) -> Any {
        guard let index = KeyedStructure.uid(reference) else {
            throw Refusal(.corruptArchive, "\(what) is not an object reference")
        }
        guard index > 0, index < objects.count else {
            throw Refusal(.corruptArchive, "\(what) refers to object \(index) of a \(objects.count)-object table")
        }
        return objects[index]
    }

    /// The class name of an archived object, nil for a plain property-list value.
    func className(_ object: Any, _ what: String) throws(Refusal) -> String? {
        guard let dictionary = object as? [String: Any], let reference = dictionary["$class"] else { return nil }
        guard let description = try self.object(reference, "the class of \(what)") as? [String: Any],
              let name = description["$classname"] as? String else {
            throw Refusal(.corruptArchive, "the class of \(what) has no name")
        }
        return name
    }

    func describe(_ object: Any, className: String?) -> String {
        if let className { return className }
        if KeyedStructure.isBoolean(object) { return "a boolean" }
        switch object {
        case is String: return "a string"
        case is Int, is Double, is NSNumber: return "a number"
        case is Data: return "data"
        case is [Any]: return "a bare array"
        case is [String: Any]: return "a bare dictionary"
        default: return "\(type(of: object))"
        }
    }

    func validate(top: [String: Any]) throws(Refusal) -> Shape {
        guard let topLevel = top["$top"] as? [String: Any], let rootReference = topLevel["root"] else {
            throw Refusal(.corruptArchive, "the archive has no root object")
        }
        let root = try object(rootReference, "the root")
        let rootClass = try className(root, "the root")
        if let rootClass, settings.classNames.contains(rootClass) {
            try validateMemo(root, "the memo")
            return .memo
        }
        guard rootClass == "NSArray" || rootClass == "NSMutableArray", let array = root as? [String: Any] else {
            throw Refusal(.wrongRootClass, "the root is \(describe(root, className: rootClass)), not a Memo or an array of them")
        }
        guard let items = array["NS.objects"] as? [Any] else {
            throw Refusal(.corruptArchive, "the array has no NS.objects")
        }
        guard Int64(items.count) <= settings.maxItems else {
            throw Refusal(.tooManyEntries, "\(items.count) memos, over the \(settings.maxItems)-item limit")
        }
        for (index, reference) in items.enumerated() {
            let item = try object(reference, "item \(index)")
            let itemClass = try className(item, "item \(index)")
            guard let itemClass, settings.classNames.contains(itemClass) else {
                throw Refusal(.wrongRootClass, "item \(index) is \(describe(item, className: itemClass)), not a Memo")
            }
            try validateMemo(item, "item \(index)")
        }
        return .memos(items.count)
    }

    /// schema: present, an integer, the supported one; text: present, a string of at
    /// most the allowed UTF-16 length.
    func validateMemo(_ object: Any, _ what: String) throws(Refusal) {
        guard let fields = object as? [String: Any] else { throw Refusal(.corruptArchive, "\(what) is not an object") }
        guard let schema = fields["schema"] else { throw Refusal(.invalidField, "\(what) has no schema") }
        guard let number = schema as? Int, !KeyedStructure.isBoolean(schema) else {
            throw Refusal(.invalidField, "\(what): schema is \(describe(schema, className: nil)), not an integer")
        }
        guard number == ArchivedMemo.supportedSchema else {
            throw Refusal(.unsupportedSchema, "\(what): schema \(number); this version reads schema \(ArchivedMemo.supportedSchema)")
        }
        guard let textReference = fields["text"] else { throw Refusal(.invalidField, "\(what) has no text") }
        let text = try self.object(textReference, "\(what)'s text")
        let textClass = try className(text, "\(what)'s text")
        let string: String
        if let plain = text as? String, textClass == nil {
            string = plain
        } else if textClass == "NSString" || textClass == "NSMutableString",
                  let boxed = (text as? [String: Any])?["NS.string"] as? String {
            string = boxed
        } else {
            throw Refusal(.invalidField, "\(what): text is \(describe(text, className: textClass)), not a string")
        }
        let units = string.utf16.count
        guard Int64(units) <= settings.maxTextUnits else {
            throw Refusal(.invalidField, "\(what): text is \(units) UTF-16 units, over \(settings.maxTextUnits)")
        }
    }
}
