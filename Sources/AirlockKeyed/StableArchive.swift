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
        var plist = try PropertyListSerialization.propertyList(from: archiver.encodedData, options: [], format: nil) as! [String: Any]
        var renames: [String: String] = [:]
        for (_, (cls, name)) in classNames { renames[NSStringFromClass(cls)] = name }
        var objects = plist["$objects"] as! [Any]
        for (index, object) in objects.enumerated() {
            guard var description = object as? [String: Any], let name = description["$classname"] as? String else { continue }
            description["$classname"] = renames[name] ?? name
            if let chain = description["$classes"] as? [String] { description["$classes"] = chain.map { renames[$0] ?? $0 } }
            objects[index] = description
        }
        plist["$objects"] = objects
        return try PropertyListSerialization.data(fromPropertyList: plist, format: format, options: 0)
    }

    /// A memo, or an array of memos, archived with the Memo class named `className`.
    public static func memos(_ memos: [ArchivedMemo], asArray: Bool, className: String = "Memo",
                             format: PropertyListSerialization.PropertyListFormat = .binary) throws -> Data {
        let root: Any = asArray ? memos as NSArray : memos[0]
        return try archive(root, classNames: [ObjectIdentifier(ArchivedMemo.self): (ArchivedMemo.self, className)], format: format)
    }
}
