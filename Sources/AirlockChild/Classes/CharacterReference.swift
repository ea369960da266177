/// A character reference as a browser decodes it in an attribute's value, read
/// one byte at a time from the byte after its `&`, so that one may be cut by a
/// chunk's seam and go on however long it is (`&#0000…058;` has any number of
/// leading zeros).
///
/// Numeric references (`&#58;`, `&#x3A;`) are decoded whatever their value, and
/// end at their `;` or at the first byte that is not a digit, as browsers read
/// them. Of the named ones, only those that can change whether a URL runs script
/// are decoded: `&colon;`, and `&Tab;` and `&NewLine;`, which a URL drops. Every
/// other name, which decodes to no ASCII letter, `:`, tab or line break, is left
/// as its bytes, as is a named reference without its `;` (which a browser does
/// not decode in an attribute's value where a letter follows).
///
/// In a file that declares entities (an XML document type's `<!ENTITY`), a
/// reference by any other name, but XML's own five, may stand for any text:
/// it is read whole, however long its name, and stands for `entity`.
struct CharacterReference {
    /// What a decoded reference stands for: an ASCII byte, or `nonASCII` for
    /// anything else (including the replacement character for 0 and for values
    /// past Unicode), which is never part of what the markup search looks for.
    static let nonASCII: UInt8 = 0xFF
    /// What a reference to a declared entity stands for: text the search cannot see here.
    static let entity: UInt8 = 0x01

    private enum State { case start, hash, hexStart, decimal, hex, named }
    private var state = State.start
    private var value: UInt32 = 0
    /// Whether the file declares entities, so that every name is read.
    private let entities: Bool
    /// A name's first eight bytes, the first in the lowest byte, and its last
    /// six, the last in the lowest (no allocation: the search reads many of
    /// these in text full of `&amp;`).
    private var name: UInt64 = 0, recent: UInt64 = 0
    private var nameLength = 0

    /// The longest name decoded (`NewLine`); a longer one is left as its bytes
    /// where the file declares no entities.
    private static let longestName = 7

    init(entities: Bool = false) {
        self.entities = entities
    }

    enum Step: Equatable {
        /// The reference goes on: give it the next byte.
        case more
        /// It stands for `byte`; `consumed` says whether the byte given was part
        /// of it (its `;`) or follows it.
        case decoded(UInt8, consumed: Bool)
        /// The `&` starts no reference this search decodes: it and what follows are plain bytes.
        case plain
    }

    mutating func step(_ byte: UInt8) -> Step {
        switch state {
        case .start:
            if byte == UInt8(ascii: "#") { state = .hash; return .more }
            // Without entities, only the names decoded: each starts with a letter of its own.
            let starts = entities ? ByteText.isLetter(byte) || byte == UInt8(ascii: "_")
                : byte == UInt8(ascii: "c") || byte == UInt8(ascii: "T") || byte == UInt8(ascii: "N")
            guard starts else { return .plain }
            state = .named
            appendToName(byte)
            return .more
        case .hash:
            if byte == UInt8(ascii: "x") || byte == UInt8(ascii: "X") { state = .hexStart; return .more }
            guard let digit = Self.digit(byte, radix: 10) else { return .plain }
            state = .decimal
            value = digit
            return .more
        case .hexStart:
            guard let digit = Self.digit(byte, radix: 16) else { return .plain }
            state = .hex
            value = digit
            return .more
        case .decimal, .hex:
            if let digit = Self.digit(byte, radix: state == .hex ? 16 : 10) {
                // Past Unicode it stays past Unicode, however many digits follow.
                value = min(value * (state == .hex ? 16 : 10) + digit, 0x110000)
                return .more
            }
            return .decoded(Self.ascii(value), consumed: byte == UInt8(ascii: ";"))
        case .named:
            if byte == UInt8(ascii: ";") { return named() }
            let continues = ByteText.isLetter(byte) || Self.digit(byte, radix: 10) != nil
                || (entities && (byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")))
            guard continues, entities || nameLength < Self.longestName else { return .plain }
            appendToName(byte)
            return .more
        }
    }

    @inline(__always) private mutating func appendToName(_ byte: UInt8) {
        if nameLength < 8 { name |= UInt64(byte) << (8 * nameLength) }
        recent = (recent << 8 | UInt64(byte)) & 0xFFFF_FFFF_FFFF
        nameLength += 1
    }

    /// What a name ended by its `;` stands for.
    private func named() -> Step {
        if nameLength <= Self.longestName {
            switch name {
            case Self.colon: return .decoded(UInt8(ascii: ":"), consumed: true)
            case Self.tab: return .decoded(0x09, consumed: true)
            case Self.newLine: return .decoded(0x0A, consumed: true)
            case _ where !entities: return .plain
            case Self.lt, Self.gt, Self.amp, Self.apos, Self.quot: return .decoded(Self.nonASCII, consumed: true)
            default: break
            }
        }
        return entities ? .decoded(Self.entity, consumed: true) : .plain
    }

    /// The bytes read before the one that made the reference plain, `&` first
    /// (a numeric reference never turns plain once it has a digit).
    func forEachPlainByte(_ body: (UInt8) -> Void) {
        body(UInt8(ascii: "&"))
        switch state {
        case .start, .decimal, .hex: break
        case .hash: body(UInt8(ascii: "#"))
        case .hexStart: body(UInt8(ascii: "#")); body(UInt8(ascii: "x"))
        case .named:
            // Its last six are as many as a URL's check keeps.
            for index in (0..<min(nameLength, 6)).reversed() { body(UInt8(truncatingIfNeeded: recent >> (8 * index))) }
        }
    }

    /// What the reference stands for when the file ends before its end: a numeric
    /// one ends there; a named one without its `;` is plain.
    func atEnd() -> Step {
        switch state {
        case .decimal, .hex: .decoded(Self.ascii(value), consumed: false)
        case .start, .hash, .hexStart, .named: .plain
        }
    }

    private static func ascii(_ value: UInt32) -> UInt8 {
        value > 0 && value < 0x80 ? UInt8(value) : nonASCII
    }

    private static let colon = packed("colon"), tab = packed("Tab"), newLine = packed("NewLine")
    private static let lt = packed("lt"), gt = packed("gt"), amp = packed("amp"), apos = packed("apos"), quot = packed("quot")

    /// `text` as `name` holds it.
    private static func packed(_ text: StaticString) -> UInt64 {
        (0..<text.utf8CodeUnitCount).reduce(0) { $0 | UInt64(text.utf8Start[$1]) << (8 * $1) }
    }

    private static func digit(_ byte: UInt8, radix: UInt32) -> UInt32? {
        let value: UInt32
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): value = UInt32(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): value = UInt32(byte - UInt8(ascii: "A")) + 10
        default: return nil
        }
        return value < radix ? value : nil
    }

    /// The reference starting with the `&` at `index`, read from the bytes that
    /// follow it up to `end`: what it stands for and the position after it, or
    /// nil where it is plain; `.more` where the bytes end first.
    static func read(_ bytes: UnsafeRawBufferPointer, after index: Int, to end: Int, atFileEnd: Bool,
                     entities: Bool = false) -> (Step, next: Int) {
        var reference = CharacterReference(entities: entities)
        return reference.resume(bytes, at: index + 1, to: end, atFileEnd: atFileEnd)
    }

    /// Goes on reading at `position`, up to `end`: what the reference stands for
    /// and the position after it, or `.more` with `end` where the bytes end first
    /// and more of the file is to come.
    mutating func resume(_ bytes: UnsafeRawBufferPointer, at position: Int, to end: Int, atFileEnd: Bool) -> (Step, next: Int) {
        var position = position
        while position < end {
            let step = step(bytes[position])
            switch step {
            case .more: position += 1
            case .decoded(_, let consumed): return (step, consumed ? position + 1 : position)
            case .plain: return (.plain, position)
            }
        }
        return atFileEnd ? (atEnd(), position) : (.more, position)
    }
}
