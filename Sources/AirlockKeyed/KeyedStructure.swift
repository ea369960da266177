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
    let objects: [PropertyListValue]
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

    func object(_ reference: PropertyListValue, _ what: String) throws(Refusal) -> PropertyListValue {
        guard let index = reference.uidValue else {
            throw Refusal(.corruptArchive, "\(what) is not an object reference")
        }
        guard index > 0, index < objects.count else {
            throw Refusal(.corruptArchive, "\(what) refers to object \(index) of a \(objects.count)-object table")
        }
        return objects[index]
    }

    /// The class name of an archived object, nil for a plain property-list value.
    func className(_ object: PropertyListValue, _ what: String) throws(Refusal) -> String? {
        guard let reference = object.dictionaryValue?["$class"] else { return nil }
        guard let name = try self.object(reference, "the class of \(what)").dictionaryValue?["$classname"]?.stringValue else {
            throw Refusal(.corruptArchive, "the class of \(what) has no name")
        }
        return name
    }

    func describe(_ object: PropertyListValue, className: String?) -> String {
        if let className { return className }
        switch object {
        case .boolean: return "a boolean"
        case .string: return "a string"
        case .integer, .largeInteger, .real: return "a number"
        case .data: return "data"
        case .array: return "a bare array"
        case .dictionary: return "a bare dictionary"
        case .date, .uid, .other: return object.foundationTypeName
        }
    }

    func validate(top: [String: PropertyListValue]) throws(Refusal) -> Shape {
        guard let rootReference = top["$top"]?.dictionaryValue?["root"] else {
            throw Refusal(.corruptArchive, "the archive has no root object")
        }
        let root = try object(rootReference, "the root")
        let rootClass = try className(root, "the root")
        if let rootClass, settings.classNames.contains(rootClass) {
            try validateMemo(root, "the memo")
            return .memo
        }
        guard rootClass == "NSArray" || rootClass == "NSMutableArray", let array = root.dictionaryValue else {
            throw Refusal(.wrongRootClass, "the root is \(describe(root, className: rootClass)), not a Memo or an array of them")
        }
        guard let items = array["NS.objects"]?.arrayValue else {
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
    func validateMemo(_ object: PropertyListValue, _ what: String) throws(Refusal) {
        guard let fields = object.dictionaryValue else { throw Refusal(.corruptArchive, "\(what) is not an object") }
        guard let schema = fields["schema"] else { throw Refusal(.invalidField, "\(what) has no schema") }
        guard let number = schema.integerValue else {
            throw Refusal(.invalidField, "\(what): schema is \(describe(schema, className: nil)), not an integer")
        }
        guard number == ArchivedMemo.supportedSchema else {
            throw Refusal(.unsupportedSchema, "\(what): schema \(number); this version reads schema \(ArchivedMemo.supportedSchema)")
        }
        guard let textReference = fields["text"] else { throw Refusal(.invalidField, "\(what) has no text") }
        let text = try self.object(textReference, "\(what)'s text")
        let textClass = try className(text, "\(what)'s text")
        let string: String
        if let plain = text.stringValue, textClass == nil {
            string = plain
        } else if textClass == "NSString" || textClass == "NSMutableString",
                  let boxed = text.dictionaryValue?["NS.string"]?.stringValue {
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
