import Foundation

/// Writes keyed archives whose class names are stable and chosen, independent of
/// the Swift module a class lives in: how this project writes every archive it
/// makes (fixtures, round-trip tests).
///
/// `setClassName(_:for:)` is called as Apple's Foundation expects, but
/// swift-corelibs-foundation ignores it when it describes classes (its
/// `_classDictionary` uses `NSStringFromClass`, which gives `Module.Class`), so the
/// class descriptions are also renamed in the property list before it is written.
public enum StableArchive {
    public static func archive(_ root: Any, classNames: [ObjectIdentifier: (AnyClass, String)] = [:],
                               format: PropertyListSerialization.PropertyListFormat = .binary) throws -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        for (_, (cls, name)) in classNames { archiver.setClassName(name, for: cls) }
        archiver.encode(root, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        let plist = PropertyListValue(try PropertyListSerialization.propertyList(from: archiver.encodedData, options: [], format: nil))
        var renames: [String: String] = [:]
        for (_, (cls, name)) in classNames { renames[NSStringFromClass(cls)] = name }
        guard var top = plist.dictionaryValue, let objects = top["$objects"]?.arrayValue else {
            preconditionFailure("NSKeyedArchiver wrote a property list without an $objects table")
        }
        top["$objects"] = .array(objects.map { renamingClass(of: $0, renames) })
        return try PropertyListValue.dictionary(top).propertyListData(format: format)
    }

    /// A class description with its class name and fallbacks renamed; any other
    /// object as it is.
    private static func renamingClass(of object: PropertyListValue, _ renames: [String: String]) -> PropertyListValue {
        guard var description = object.dictionaryValue, let name = description["$classname"]?.stringValue else { return object }
        description["$classname"] = .string(renames[name] ?? name)
        if let chain = description["$classes"]?.arrayValue, chain.allSatisfy({ $0.stringValue != nil }) {
            description["$classes"] = .array(chain.map { .string(renames[$0.stringValue!] ?? $0.stringValue!) })
        }
        return .dictionary(description)
    }

    /// A memo, or an array of memos, archived with the Memo class named `className`.
    public static func memos(_ memos: [ArchivedMemo], asArray: Bool, className: String = "Memo",
                             format: PropertyListSerialization.PropertyListFormat = .binary) throws -> Data {
        let root: Any = asArray ? memos as NSArray : memos[0]
        return try archive(root, classNames: [ObjectIdentifier(ArchivedMemo.self): (ArchivedMemo.self, className)], format: format)
    }
}
