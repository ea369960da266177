/// MIME type text as airlock handles it: `type/subtype`, lowercase, each part
/// an RFC 6838 restricted name.
public enum MediaType {
    public static let maxBytes = 255

    public static func isWellFormed(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        return text.utf8.count <= maxBytes && parts.count == 2 && parts.allSatisfy { isName(Substring($0)) }
    }

    /// An RFC 6838 restricted name, lowercase.
    static func isName(_ part: Substring) -> Bool {
        guard let first = part.utf8.first, isAlphanumeric(first), part.utf8.count <= 127 else { return false }
        return part.utf8.allSatisfy { isAlphanumeric($0) || Array("!#$&-^_.+".utf8).contains($0) }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// One pattern of `content.allow` or `content.deny`: `type/subtype`, `type/*` or `*/*`.
public struct MediaPattern: Sendable, Equatable, CustomStringConvertible {
    public let text: String

    /// nil unless `text` is a well-formed pattern (lowercase).
    public init?(_ text: String) {
        if text == "*/*" || MediaType.isWellFormed(text) {
            self.text = text
            return
        }
        guard text.hasSuffix("/*"), MediaType.isName(text.dropLast(2)) else { return nil }
        self.text = text
    }

    public func matches(_ type: String) -> Bool {
        if text == "*/*" { return true }
        if text.hasSuffix("/*") { return type.hasPrefix(text.dropLast()) }
        return type == text
    }

    public var description: String { text }
}

/// The content rules: which detected types may pass, and whether a file's
/// extension must agree with its content. Judged on the types the decoder
/// child detected, after the archive's own rules found nothing.
public struct ContentPolicy: Sendable, Equatable {
    /// Empty: every type not denied.
    public var allow: [MediaPattern] = []
    public var deny: [MediaPattern] = []
    /// nil: extensions are not compared with content.
    public var extensionTypes: ExtensionTypes?
    /// Classes no file may have (`content.deny_classes`); judged without libmagic.
    public var denyClasses: Set<ContentClass> = []

    public init() {}

    /// Whether any rule looks at MIME types at all.
    public var isActive: Bool { !allow.isEmpty || !deny.isEmpty || extensionTypes != nil }
    /// Whether a rule needs libmagic's MIME types (the classes do not).
    public var usesTypes: Bool { isActive }

    /// The violation to report for these files, or nil. Every file is judged and
    /// the worst kept (`Findings`), so the verdict does not depend on entry order.
    ///
    /// - Parameter files: each file's escaped entry name and detected type.
    public func judge(_ files: [(entry: String, type: String)]) -> Violation? {
        var findings = Findings()
        for file in files {
            if let violation = judge(entry: file.entry, type: file.type) { findings.record(violation) }
        }
        return findings.worst
    }

    func judge(entry: String, type: String) -> Violation? {
        let name = Array(entry.utf8)
        if let pattern = deny.first(where: { $0.matches(type) }) {
            return Violation(.disallowedType, "\"\(entry)\" is \(type), which content.deny names (\(pattern))", entry: name)
        }
        if !allow.isEmpty, !allow.contains(where: { $0.matches(type) }) {
            let list = allow.map(\.text).joined(separator: ", ")
            return Violation(.disallowedType, "\"\(entry)\" is \(type), which content.allow does not name (\(list))", entry: name)
        }
        if let table = extensionTypes, let (ext, named) = table.types(forName: entry), ExtensionTypes.contradicts(type, named) {
            let list = named.sorted().joined(separator: ", ")
            return Violation(.typeMismatch,
                             "\"\(entry)\" is \(type), but its extension .\(ext) names \(list) (content.extension_must_match)", entry: name)
        }
        return nil
    }
}

/// Extension to MIME types, from the system's mime.types (Debian's `media-types`):
/// lines of `type/subtype ext ext ...`, `#` comments.
public struct ExtensionTypes: Sendable, Equatable {
    public private(set) var table: [String: Set<String>] = [:]

    /// Parses mime.types text; malformed lines are skipped, as mailcap tools do.
    public init(text: String) {
        for line in text.split(whereSeparator: { $0 == "\n" }) {
            if line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.lowercased() }
            guard fields.count >= 2, MediaType.isWellFormed(fields[0]) else { continue }
            for ext in fields.dropFirst() { table[ext, default: []].insert(fields[0]) }
        }
    }

    /// The extension of a name's last component (after its last dot, lowercased)
    /// and the types it names; nil when it names none.
    public func types(forName name: String) -> (String, Set<String>)? {
        let last = name.split(separator: "/").last ?? Substring(name)
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return nil }
        let ext = last[last.index(after: dot)...].lowercased()
        guard let types = table[ext] else { return nil }
        return (ext, types)
    }

    /// Whether a detected type contradicts the types an extension names. An
    /// empty file says nothing; libmagic's `text/plain` (text it has no better
    /// name for) agrees with any text type; and a subtype that differs only by an
    /// `x-` prefix or the top-level type (libmagic's `text/xml` for mime.types'
    /// `application/xml`) is the same type.
    public static func contradicts(_ detected: String, _ named: Set<String>) -> Bool {
        if detected == "application/x-empty" || detected == "inode/x-empty" || named.contains(detected) { return false }
        if detected == "text/plain", named.contains(where: { $0.hasPrefix("text/") }) { return false }
        let subtype = bareSubtype(detected)
        return !named.contains { bareSubtype($0) == subtype }
    }

    private static func bareSubtype(_ type: String) -> Substring {
        let subtype = type.split(separator: "/").last ?? Substring(type)
        return subtype.hasPrefix("x-") ? subtype.dropFirst(2) : subtype
    }
}
