import Foundation

/// The Memo record as older app versions archived it: an integer `schema` and a
/// string `text`. Its Swift name is never what an archive names: every accepted
/// archived name is mapped to it explicitly with `setClass(_:forClassName:)`,
/// and archives this project writes name it with `setClassName`.
public final class ArchivedMemo: NSObject, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }

    /// The one schema this version reads.
    public static let supportedSchema = 1
    /// The text limit in force for the decode running on this thread: bound by
    /// the keyed decoder around each decode, so decodes with different settings
    /// (tests run them in parallel) never see each other's.
    @TaskLocal static var maxTextUnits = 4096

    public let schema: Int
    public let text: String

    public init(schema: Int, text: String) {
        self.schema = schema
        self.text = text
    }

    public func encode(with coder: NSCoder) {
        coder.encode(schema, forKey: "schema")
        coder.encode(text as NSString, forKey: "text")
    }

    public init?(coder: NSCoder) {
        guard coder.containsValue(forKey: "schema") else {
            coder.failWithError(KeyedFailure.invalidField("schema is missing").error)
            return nil
        }
        // A schema stored as something other than an integer reads as 0 here,
        // which is no supported schema either.
        let schema = coder.decodeInteger(forKey: "schema")
        guard schema == ArchivedMemo.supportedSchema else {
            coder.failWithError(KeyedFailure.unsupportedSchema(schema).error)
            return nil
        }
        guard coder.containsValue(forKey: "text") else {
            coder.failWithError(KeyedFailure.invalidField("text is missing").error)
            return nil
        }
        guard let text = coder.decodeObject(of: NSString.self, forKey: "text") else {
            if coder.error == nil { coder.failWithError(KeyedFailure.invalidField("text is not a string").error) }
            return nil
        }
        guard text.length <= ArchivedMemo.maxTextUnits else {
            coder.failWithError(KeyedFailure.invalidField("text is \(text.length) UTF-16 units, over \(ArchivedMemo.maxTextUnits)").error)
            return nil
        }
        self.schema = schema
        self.text = text as String
    }
}

/// Why a keyed archive is refused, carried through NSCoder's error.
enum KeyedFailure {
    case invalidField(String)
    case unsupportedSchema(Int)

    static let domain = "airlock.keyed"

    var error: NSError {
        switch self {
        case .invalidField(let detail):
            return NSError(domain: KeyedFailure.domain, code: 1, userInfo: [NSLocalizedDescriptionKey: detail])
        case .unsupportedSchema(let schema):
            return NSError(domain: KeyedFailure.domain, code: 2,
                           userInfo: [NSLocalizedDescriptionKey: "schema \(schema); this version reads schema \(ArchivedMemo.supportedSchema)"])
        }
    }
}
