import AirlockPolicy
import AirlockSystem

extension DecoderRequest {
    /// Decodes what `encoded` wrote, and nothing else: the version first, then
    /// every other key exactly once (in any order), each value well-formed.
    /// - Throws: `Refusal`, `.version` first of all.
    public init(decoding strings: [String]) throws(Refusal) {
        guard let first = strings.first, first.hasPrefix(Key.version.rawValue + "=") else { throw .version(nil) }
        let version = Int64(first.dropFirst(Key.version.rawValue.count + 1))
        guard version == Self.acceptedVersion else { throw .version(version) }
        var fields: [Key: String] = [:]
        for string in strings.dropFirst() {
            let parts = string.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let key = Key(rawValue: String(parts[0])), key != .version else {
                throw .unknown(String(string.prefix { $0 != "=" }))
            }
            guard fields[key] == nil else { throw .repeated(key) }
            fields[key] = String(parts[1])
        }
        let reader = FieldReader(fields: fields)
        guard let mode = Mode(rawValue: try reader.text(.mode)) else { throw .malformed(.mode, fields[.mode]!) }
        let format = try reader.text(.format)
        guard !format.isEmpty else { throw .malformed(.format, format) }
        let limits = DecoderLimits(addressSpaceBytes: try reader.positive(.limitAddressSpace), cpuSeconds: try reader.positive(.limitCPU),
                                   openFiles: try reader.positive(.limitOpenFiles), fileSizeBytes: try reader.positive(.limitFileSize),
                                   requiresConfinement: try reader.confinement())
        self.init(mode: mode, format: format, progress: try reader.flag(.progress),
                  magicDatabase: try reader.optionalText(.magicDatabase), limits: limits, policy: try reader.policy(),
                  zipLegacyEncoding: try reader.requiredText(.zipLegacyEncoding),
                  tarLegacyEncoding: try reader.optionalText(.tarLegacyEncoding), keyed: try reader.keyed())
    }

    /// The version this child accepts: `currentVersion`, unless a debug build's
    /// test makes it claim another (`AIRLOCK_TEST_CLAIM_REQUEST_VERSION`, read
    /// by the child alone), so that a test can put a decoder program of another
    /// version on disk under a running daemon.
    static var acceptedVersion: Int64 {
        #if DEBUG
        if let text = CurrentProcess.environment("AIRLOCK_TEST_CLAIM_REQUEST_VERSION"), let claimed = Int64(text) { return claimed }
        #endif
        return currentVersion
    }
}

/// Reads one request's fields, each required.
private struct FieldReader {
    typealias Key = DecoderRequest.Key
    let fields: [Key: String]

    func text(_ key: Key) throws(DecoderRequest.Refusal) -> String {
        guard let value = fields[key] else { throw .missing(key) }
        return value
    }

    func number(_ key: Key) throws(DecoderRequest.Refusal) -> Int64 {
        let value = try text(key)
        guard let number = Int64(value), number >= 0, String(number) == value else { throw .malformed(key, value) }
        return number
    }

    func positive(_ key: Key) throws(DecoderRequest.Refusal) -> Int64 {
        let value = try number(key)
        guard value > 0 else { throw .malformed(key, String(value)) }
        return value
    }

    func int(_ key: Key) throws(DecoderRequest.Refusal) -> Int {
        let value = try number(key)
        guard let int = Int(exactly: value) else { throw .malformed(key, String(value)) }
        return int
    }

    func flag(_ key: Key) throws(DecoderRequest.Refusal) -> Bool {
        switch try text(key) {
        case "0": return false
        case "1": return true
        case let other: throw .malformed(key, other)
        }
    }

    func confinement() throws(DecoderRequest.Refusal) -> Bool {
        switch try text(.confinement) {
        case "required": return true
        case "best-effort": return false
        case let other: throw .malformed(.confinement, other)
        }
    }

    /// Hex-encoded UTF-8; the empty value is none.
    func optionalText(_ key: Key) throws(DecoderRequest.Refusal) -> String? {
        let value = try text(key)
        guard !value.isEmpty else { return nil }
        guard let decoded = Self.unhex(value) else { throw .malformed(key, value) }
        return decoded
    }

    func requiredText(_ key: Key) throws(DecoderRequest.Refusal) -> String {
        guard let value = try optionalText(key) else { throw .malformed(key, "") }
        return value
    }

    func policy() throws(DecoderRequest.Refusal) -> Policy {
        var policy = Policy()
        policy.maxEntries = try int(.maxEntries)
        policy.maxFileBytes = try number(.maxFileBytes)
        policy.maxTotalBytes = try number(.maxTotalBytes)
        policy.maxDropBytes = try number(.maxDropBytes)
        policy.maxComponentBytes = try int(.maxComponentBytes)
        policy.maxPathBytes = try int(.maxPathBytes)
        policy.maxDepth = try int(.maxDepth)
        policy.maxRatio = try number(.maxRatio)
        policy.ratioMinBytes = try number(.ratioMinBytes)
        policy.privateModes = try flag(.privateModes)
        policy.stagedFileMode = try octal(.stagedFileMode, admitting: Policy.admitsStagedFileMode)
        policy.stagedDirectoryMode = try octal(.stagedDirectoryMode, admitting: Policy.admitsStagedDirectoryMode)
        return policy
    }

    /// A mode in octal digits, as `String(_:radix: 8)` writes them, that `admits` takes.
    func octal(_ key: Key, admitting admits: (UInt32) -> Bool) throws(DecoderRequest.Refusal) -> UInt32 {
        let value = try text(key)
        guard let mode = UInt32(value, radix: 8), String(mode, radix: 8) == value, admits(mode) else { throw .malformed(key, value) }
        return mode
    }

    func keyed() throws(DecoderRequest.Refusal) -> KeyedSettings {
        var keyed = KeyedSettings()
        let names = try text(.keyedClassNames)
        var classNames: [String] = []
        for name in names.split(separator: ",", omittingEmptySubsequences: false) {
            guard let decoded = Self.unhex(String(name)), !decoded.isEmpty else { throw .malformed(.keyedClassNames, names) }
            classNames.append(decoded)
        }
        keyed.classNames = classNames
        keyed.maxBytes = try number(.keyedMaxBytes)
        keyed.maxItems = try number(.keyedMaxItems)
        keyed.maxTextUnits = try number(.keyedMaxTextUnits)
        keyed.keepOriginal = try flag(.keyedKeepOriginal)
        return keyed
    }

    /// Lower-case hex digits, two per byte, that are valid UTF-8; nil otherwise.
    static func unhex(_ text: String) -> String? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
