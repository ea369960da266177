import AirlockText

/// An archive entry's name that passed the path policy: relative, `/`-separated
/// UTF-8 components, none empty, `.` or `..`, none holding `\`, `:`, NUL, a
/// control character or an invisible one (`InvisibleScalars`: bidirectional
/// controls, zero-width spaces and the like, which make a name read as another),
/// within the length and depth limits.
public struct EntryPath: Sendable, Hashable {
    /// The name exactly as the archive spelled it.
    public let raw: [UInt8]
    /// The components, without any trailing `/`.
    public let components: [[UInt8]]
    /// The same components as text (valid UTF-8 was checked).
    public let texts: [String]
    /// True when the name ended with one `/`.
    public let hasTrailingSlash: Bool

    public var depth: Int { components.count }

    /// Validates `raw` against `policy`; throws the violation that rejects it.
    ///
    /// The checks run in a fixed order (unsafe spelling, then lengths, then depth)
    /// so one name always meets the same reason.
    public init(validating raw: [UInt8], policy: Policy) throws(PathViolation) {
        self.raw = raw
        guard !raw.isEmpty else { throw PathViolation(.unsafePath, "empty name") }
        if raw.contains(0) { throw PathViolation(.unsafePath, "name holds a NUL byte") }
        guard raw.first != UInt8(ascii: "/") else { throw PathViolation(.unsafePath, "absolute path") }
        guard let text = UTF8Scalar.string(raw) else { throw PathViolation(.unsafePath, "name is not valid UTF-8") }
        for scalar in text.unicodeScalars {
            if UTF8Scalar.isControl(scalar) { throw PathViolation(.unsafePath, "name holds a control character") }
            if scalar == "\\" { throw PathViolation(.unsafePath, "name holds a backslash") }
            if scalar == ":" { throw PathViolation(.unsafePath, "name holds a colon (drive letter or stream)") }
            if InvisibleScalars.contains(scalar) {
                throw PathViolation(.unsafePath, "name holds U+\(DisplayText.hex(scalar.value)), an invisible or bidirectional control character")
            }
        }
        var body = raw[...]
        hasTrailingSlash = raw.last == UInt8(ascii: "/")
        if hasTrailingSlash { body = body.dropLast() }
        let parts = body.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        for part in parts {
            if part.isEmpty { throw PathViolation(.unsafePath, "empty path component") }
            if part == [0x2E] { throw PathViolation(.unsafePath, "'.' path component") }
            if part == [0x2E, 0x2E] { throw PathViolation(.unsafePath, "'..' path component") }
        }
        for part in parts where part.count > policy.maxComponentBytes {
            throw PathViolation(.nameTooLong, "a component of \(part.count) bytes exceeds \(policy.maxComponentBytes)")
        }
        guard body.count <= policy.maxPathBytes else {
            throw PathViolation(.nameTooLong, "path of \(body.count) bytes exceeds \(policy.maxPathBytes)")
        }
        guard parts.count <= policy.maxDepth else {
            throw PathViolation(.tooDeep, "\(parts.count) levels exceed \(policy.maxDepth)")
        }
        components = parts
        texts = parts.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Why a name failed the path policy.
public struct PathViolation: Error, Sendable, Equatable {
    public let reason: Reason
    public let detail: String
    /// The name to report when it is not the entry being judged (the prefix
    /// that conflicts, the smaller of two colliding spellings).
    public let entry: [UInt8]?
    /// The other entry of a conflict or collision, as a full path.
    public let other: [UInt8]?

    public init(_ reason: Reason, _ detail: String, entry: [UInt8]? = nil, other: [UInt8]? = nil) {
        self.reason = reason
        self.detail = detail
        self.entry = entry
        self.other = other
    }
}
