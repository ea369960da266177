import AirlockChild
import AirlockPolicy
import Foundation

/// The `content` section: content classes (always given, in the decoder
/// children), the rules on them, MIME type detection by libmagic and the rules
/// judged on the detected types.
public struct ContentSettings: Sendable, Equatable {
    /// Name every file's type with libmagic even when no rule needs it (the types
    /// reach the journal, reports and manifests).
    public var detectTypes = false
    /// libmagic's compiled database (Debian's `libmagic-mgc`).
    public var magicDatabase = "/usr/lib/file/magic.mgc"
    /// The extension table for `extension_must_match` (Debian's `media-types`).
    public var mimeTypes = "/etc/mime.types"
    public var extensionMustMatch = false
    /// `allow`, `deny` and, once read, the extension table.
    public var policy = ContentPolicy()

    public init() {}

    /// Whether libmagic runs: a rule names MIME types, or `detect_types` asks for them.
    public var runsLibmagic: Bool { detectTypes || policy.usesTypes }

    /// What runs libmagic, in words, for `status` and `doctor`; nil when it does not run.
    public var libmagicReason: String? {
        var rules: [String] = []
        if !policy.allow.isEmpty { rules.append("content.allow") }
        if !policy.deny.isEmpty { rules.append("content.deny") }
        if policy.extensionTypes != nil { rules.append("content.extension_must_match") }
        if !rules.isEmpty { return rules.joined(separator: ", ") + " name MIME types" }
        return detectTypes ? "content.detect_types is true" : nil
    }
}

/// The `scan` section: virus scanning through clamd.
public struct ScanSettings: Sendable, Equatable {
    /// clamd's local socket; empty: no scanning.
    public var clamdSocket = ""
    /// The longest wait for clamd's answer about one file.
    public var timeoutSeconds: Int64 = 60

    public init() {}

    package var client: ClamdClient? {
        clamdSocket.isEmpty ? nil : ClamdClient(socketPath: clamdSocket, timeoutSeconds: timeoutSeconds)
    }
}

extension Configuration {
    static let scanSettings: [NumericSetting] = [
        NumericSetting("scan", "timeout_seconds", 1...3600, "1 to 3600 (an hour)",
                       read: { $0.scan.timeoutSeconds }, write: { $0.scan.timeoutSeconds = $1! }),
    ]

    /// The non-numeric keys of `content`.
    mutating func readContentKeys(_ reader: inout ObjectReader) throws(ConfigurationError) {
        // Rules naming MIME types run libmagic whatever this says (the file airlock init
        // writes says false, and a profile with rules is merged into it).
        content.detectTypes = try reader.bool("detect_types") ?? content.detectTypes
        for (key, keyPath) in [("magic_database", \ContentSettings.magicDatabase), ("mime_types", \.mimeTypes)] {
            guard let path = try reader.string(key) else { continue }
            guard path.hasPrefix("/"), !path.contains("\0"), path.utf8.count <= Configuration.maxPathSettingBytes else {
                throw ConfigurationError("content.\(key): must be an absolute path of at most \(Configuration.maxPathSettingBytes) bytes")
            }
            content[keyPath: keyPath] = path
        }
        content.policy.allow = try Configuration.patterns(&reader, "allow")
        content.policy.deny = try Configuration.patterns(&reader, "deny")
        content.extensionMustMatch = try reader.bool("extension_must_match") ?? false
        content.policy.denyClasses = try Configuration.classes(&reader)
        if content.extensionMustMatch {
            guard let data = FileManager.default.contents(atPath: content.mimeTypes) else {
                throw ConfigurationError("content.mime_types: \(content.mimeTypes) cannot be read (Debian's media-types package provides it)")
            }
            content.policy.extensionTypes = ExtensionTypes(text: String(decoding: data, as: UTF8.self))
        }
    }

    private static func classes(_ reader: inout ObjectReader) throws(ConfigurationError) -> Set<ContentClass> {
        guard let list = try reader.stringArray("deny_classes") else { return [] }
        var classes = Set<ContentClass>()
        for text in list {
            guard let found = ContentClass(rawValue: text) else {
                let known = ContentClass.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                throw ConfigurationError("content.deny_classes: \(JSONObjectWriter.quote(text)) is not a content class (\(known))")
            }
            classes.insert(found)
        }
        return classes
    }

    private static func patterns(_ reader: inout ObjectReader, _ key: String) throws(ConfigurationError) -> [MediaPattern] {
        guard let list = try reader.stringArray(key) else { return [] }
        var patterns: [MediaPattern] = []
        for text in list {
            guard let pattern = MediaPattern(text) else {
                throw ConfigurationError("content.\(key): \(JSONObjectWriter.quote(text)) is not a MIME type pattern (type/subtype, type/* or */*, lowercase)")
            }
            patterns.append(pattern)
        }
        return patterns
    }

    /// The non-numeric keys of `scan`.
    mutating func readScanKeys(_ reader: inout ObjectReader) throws(ConfigurationError) {
        guard let path = try reader.string("clamd_socket") else { return }
        // sun_path holds 107 bytes and a NUL.
        guard path.isEmpty || (path.hasPrefix("/") && !path.contains("\0") && path.utf8.count <= 107) else {
            throw ConfigurationError("scan.clamd_socket: must be empty or an absolute path of at most 107 bytes")
        }
        scan.clamdSocket = path
    }

    var renderedContentKeys: [String] {
        [
            "\"detect_types\": \(content.detectTypes)",
            "\"magic_database\": \(JSONObjectWriter.quote(content.magicDatabase))",
            "\"mime_types\": \(JSONObjectWriter.quote(content.mimeTypes))",
            "\"allow\": [\(content.policy.allow.map { JSONObjectWriter.quote($0.text) }.joined(separator: ", "))]",
            "\"deny\": [\(content.policy.deny.map { JSONObjectWriter.quote($0.text) }.joined(separator: ", "))]",
            "\"extension_must_match\": \(content.extensionMustMatch)",
            "\"deny_classes\": [\(content.policy.denyClasses.sorted().map { JSONObjectWriter.quote($0.rawValue) }.joined(separator: ", "))]",
        ]
    }

    var renderedScanKeys: [String] { ["\"clamd_socket\": \(JSONObjectWriter.quote(scan.clamdSocket))"] }
}
