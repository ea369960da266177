/// A hostile name made safe to print: valid UTF-8 that is not a control character
/// stays as it is, a backslash is doubled, and every other byte becomes `\xHH`.
///
/// Two different byte strings always escape to two different texts, unlike
/// `String(decoding:)`, which repairs invalid UTF-8 and can merge names.
///
/// `text` keeps invisible scalars (bidirectional controls, zero-width spaces) as
/// they are, for JSON, which must carry the exact name; `description`, which
/// string interpolation uses, and `shown` escape them too, for a person to read.
public struct EscapedName: Sendable, Hashable, CustomStringConvertible {
    public let text: String

    public init(_ bytes: some Collection<UInt8>) {
        // Most names are printable ASCII without a backslash, which the loop
        // below would copy byte for byte; checking that on contiguous bytes
        // costs a fraction of decoding them through the generic collection.
        if let plain = bytes.withContiguousStorageIfAvailable(EscapedName.plainText), let plain {
            text = plain
            return
        }
        var out = ""
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if let (scalar, next) = UTF8Scalar.decode(bytes, at: index) {
                if scalar == "\\" {
                    out += "\\\\"
                } else if UTF8Scalar.isControl(scalar) {
                    // Escape every byte of the control character (C1 controls are two).
                    var byteIndex = index
                    while byteIndex != next {
                        out += EscapedName.hex(bytes[byteIndex])
                        byteIndex = bytes.index(after: byteIndex)
                    }
                } else {
                    out.unicodeScalars.append(scalar)
                }
                index = next
            } else {
                out += EscapedName.hex(bytes[index])
                index = bytes.index(after: index)
            }
        }
        text = out
    }

    public var description: String { shown }

    /// `text` with every invisible scalar written `\u{XXXX}` (see `DisplayText`).
    public var shown: String { DisplayText.escaping(text) }

    /// `bytes` as text when every byte is printable ASCII other than a backslash, the
    /// bytes this escaping keeps as they are; otherwise nil.
    static func plainText(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        for byte in bytes where byte < 0x20 || byte > 0x7E || byte == 0x5C { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
    }
}

/// Strict UTF-8 decoding of one scalar: no overlong forms, no surrogates, nothing
/// past U+10FFFF.
public enum UTF8Scalar {
    public static func decode<C: Collection<UInt8>>(_ bytes: C, at start: C.Index) -> (Unicode.Scalar, C.Index)? {
        let first = bytes[start]
        var index = bytes.index(after: start)
        if first < 0x80 { return (Unicode.Scalar(first), index) }
        let length: Int
        var value: UInt32
        switch first {
        case 0xC2...0xDF: length = 2; value = UInt32(first & 0x1F)
        case 0xE0...0xEF: length = 3; value = UInt32(first & 0x0F)
        case 0xF0...0xF4: length = 4; value = UInt32(first & 0x07)
        default: return nil
        }
        for _ in 1..<length {
            guard index != bytes.endIndex else { return nil }
            let byte = bytes[index]
            guard byte & 0xC0 == 0x80 else { return nil }
            value = (value << 6) | UInt32(byte & 0x3F)
            index = bytes.index(after: index)
        }
        if length == 3 && value < 0x800 { return nil }
        if length == 4 && (value < 0x10000 || value > 0x10FFFF) { return nil }
        guard let scalar = Unicode.Scalar(value) else { return nil }  // surrogates
        return (scalar, index)
    }

    /// Strictly decodes `bytes` as UTF-8, or returns nil.
    public static func string(_ bytes: some Collection<UInt8>) -> String? {
        // ASCII is valid UTF-8 as it is; checking for it on contiguous bytes is
        // far cheaper than decoding through the generic collection.
        if let ascii = bytes.withContiguousStorageIfAvailable({ buffer -> String? in
            for byte in buffer where byte >= 0x80 { return nil }
            return String(decoding: buffer, as: UTF8.self)
        }), let ascii {
            return ascii
        }
        var out = String.UnicodeScalarView()
        var index = bytes.startIndex
        while index != bytes.endIndex {
            guard let (scalar, next) = decode(bytes, at: index) else { return nil }
            out.append(scalar)
            index = next
        }
        return String(out)
    }

    /// C0 controls, DEL and C1 controls.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
