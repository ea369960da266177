import AirlockPolicy
import Foundation

/// Decodes one keyed archive of Memo records, securely, or says why not.
public struct KeyedDecoder {
    public enum Outcome: Equatable {
        case memo(ArchivedMemoValue)
        case memos([ArchivedMemoValue])
        case rejected(Reason, String)
    }

    public let settings: KeyedSettings

    public init(settings: KeyedSettings) {
        self.settings = settings
    }

    /// Foundation classes that may legitimately appear in a Memo archive's class
    /// descriptions: the collection and the root of every class hierarchy.
    static let structuralClasses: Set<String> = ["NSArray", "NSMutableArray", "NSObject"]
    /// Foundation value classes: allowed to be named (a wrong root or field is then
    /// a wrong-root-class or invalid-field), never decoded into the result.
    static let valueClasses: Set<String> = [
        "NSString", "NSMutableString", "NSNumber", "NSDictionary", "NSMutableDictionary", "NSData", "NSMutableData",
        "NSDate", "NSSet", "NSMutableSet", "NSNull", "NSURL", "NSUUID", "NSValue",
    ]

    public func decode(_ data: Data) -> Outcome {
        guard Int64(data.count) <= settings.maxBytes else {
            return .rejected(.dropTooLarge, "\(data.count) bytes, over the \(settings.maxBytes)-byte limit for keyed archives")
        }
        // Text Foundation's reader would repair rather than refuse is refused first.
        do {
            try BinaryPlistText(bytes: [UInt8](data)).check()
        } catch {
            return .rejected(error.reason, error.detail)
        }
        // The property list first: is it a keyed archive at all, and which class
        // names does it use (including fallbacks in $classes, which the unarchiver
        // would try in turn)? Nothing is allowed because the input names it.
        let plist: PropertyListValue
        do {
            plist = PropertyListValue(try PropertyListSerialization.propertyList(from: data, options: [], format: nil))
        } catch {
            return .rejected(.corruptArchive, "not a readable property list: \(describe(error))")
        }
        guard let top = plist.dictionaryValue else {
            return .rejected(.unsupportedFormat, "a property list that is not a keyed archive")
        }
        guard top["$archiver"]?.stringValue == "NSKeyedArchiver" else {
            return .rejected(.unsupportedFormat, "a property list whose $archiver is not NSKeyedArchiver")
        }
        guard let objects = top["$objects"]?.arrayValue else {
            return .rejected(.corruptArchive, "the keyed archive has no $objects table")
        }
        if let refusal = KeyedDecoder.unconfiguredClass(in: objects, accepted: Set(settings.classNames)) {
            return .rejected(refusal.reason, refusal.detail)
        }

        let shape: KeyedStructure.Shape
        do {
            shape = try KeyedStructure(objects: objects, settings: settings).validate(top: top)
        } catch {
            return .rejected(error.reason, error.detail)
        }

        return ArchivedMemo.$maxTextUnits.withValue(Int(settings.maxTextUnits)) {
            unarchive(data, shape: shape)
        }
    }

    /// The refusal for the first class description naming a class that is neither
    /// configured nor a Foundation class a Memo archive may use, or holding a name
    /// that is not a string; nil when every description passes.
    ///
    /// A description's names are its `$classname` and then its `$classes` (the
    /// fallbacks the unarchiver would try in turn; not an array counts as none).
    /// Every string is judged before any non-string is. A missing or non-string
    /// `$classname` is reported as `Optional<Any>`, a non-string fallback by the
    /// type Foundation's reader gave it: the wording these rejections have had
    /// since they were first written, kept so reports stay comparable.
    static func unconfiguredClass(in objects: [PropertyListValue], accepted: Set<String>) -> KeyedStructure.Refusal? {
        for object in objects {
            guard let description = object.dictionaryValue,
                  description["$classname"] != nil || description["$classes"] != nil else { continue }
            let fallbacks = description["$classes"]?.arrayValue ?? []
            let strings = ([description["$classname"]?.stringValue] + fallbacks.map(\.stringValue)).compactMap { $0 }
            for name in strings {
                if accepted.contains(name) || structuralClasses.contains(name) || valueClasses.contains(name) { continue }
                return KeyedStructure.Refusal(.unknownClass, "the archive names class \"\(name)\", which is not configured")
            }
            if description["$classname"]?.stringValue == nil {
                return KeyedStructure.Refusal(.corruptArchive, "a class description with a non-string name Optional<Any>")
            }
            if let odd = fallbacks.first(where: { $0.stringValue == nil }) {
                return KeyedStructure.Refusal(.corruptArchive, "a class description with a non-string name \(odd.foundationTypeName)")
            }
        }
        return nil
    }

    /// Decodes the checked property list with NSKeyedUnarchiver, as secure coding
    /// and the class allowlist require.
    private func unarchive(_ data: Data, shape: KeyedStructure.Shape) -> Outcome {
        let unarchiver: NSKeyedUnarchiver
        do {
            unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        } catch {
            return .rejected(.corruptArchive, describe(error))
        }
        unarchiver.requiresSecureCoding = true
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        for name in settings.classNames {
            unarchiver.setClass(ArchivedMemo.self, forClassName: name)
        }
        let root: Any?
        switch shape {
        case .memo:
            root = unarchiver.decodeObject(of: ArchivedMemo.self, forKey: NSKeyedArchiveRootObjectKey)
        case .memos:
            root = unarchiver.decodeObject(of: [NSArray.self, ArchivedMemo.self], forKey: NSKeyedArchiveRootObjectKey)
        }
        unarchiver.finishDecoding()
        if let error = unarchiver.error {
            let nsError = error as NSError
            if nsError.domain == KeyedFailure.domain {
                return .rejected(nsError.code == 2 ? .unsupportedSchema : .invalidField, nsError.localizedDescription)
            }
            return .rejected(.corruptArchive, describe(error))
        }
        switch (shape, root) {
        case (.memo, let memo as ArchivedMemo):
            return .memo(ArchivedMemoValue(memo))
        case (.memos(let count), let array as NSArray) where array.count == count:
            var values: [ArchivedMemoValue] = []
            for (index, element) in array.enumerated() {
                // Foundation on Linux lets other classes through an {NSArray, Memo} allowlist.
                guard let memo = element as? ArchivedMemo else {
                    return .rejected(.wrongRootClass, "item \(index) is \(type(of: element)), not a Memo")
                }
                values.append(ArchivedMemoValue(memo))
            }
            return .memos(values)
        default:
            return .rejected(.corruptArchive, "the unarchiver did not yield the records the archive describes")
        }
    }

    private func describe(_ error: Error) -> String {
        let nsError = error as NSError
        if nsError.domain == KeyedFailure.domain { return nsError.localizedDescription }
        let debug = nsError.userInfo["NSDebugDescription"] as? String
        return "\(nsError.domain) \(nsError.code)" + (debug.map { ": " + $0 } ?? "")
    }
}

/// A decoded Memo's fields, as plain values.
public struct ArchivedMemoValue: Equatable, Sendable {
    public let schema: Int
    public let text: String

    public init(schema: Int, text: String) {
        self.schema = schema
        self.text = text
    }

    init(_ memo: ArchivedMemo) {
        self.init(schema: memo.schema, text: memo.text)
    }

    /// Equal field for field, the text scalar for scalar: String's own == also holds
    /// for canonically equivalent spellings, which are different text to keep.
    public static func == (a: ArchivedMemoValue, b: ArchivedMemoValue) -> Bool {
        a.schema == b.schema && a.text.unicodeScalars.elementsEqual(b.text.unicodeScalars)
    }
}
