import AirlockPolicy
import AirlockTestSupport
import AirlockText
import Testing

@Suite("Path policy: names holding invisible or bidirectional control characters")
struct InvisibleNameTests {
    let policy = Policy()

    func verdict(_ name: String) -> Reason? {
        do {
            _ = try EntryPath(validating: Array(name.utf8), policy: policy)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("bidirectional controls, isolates, separators, zero-width and format characters are unsafe paths", arguments: [
        UInt32(0x202E), 0x202A, 0x202B, 0x202C, 0x202D, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C,
        0x2028, 0x2029, 0x200B, 0xFEFF, 0xFFF9, 0xFFFA, 0xFFFB, 0x00AD, 0x180E, 0x115F, 0x1160, 0x3164, 0xFFA0,
        0x2060, 0x2064, 0x034F, 0xE0001, 0xE0041, 0xE007F, 0x1D173, 0x110BD,
    ])
    func refused(_ value: UInt32) {
        let scalar = Unicode.Scalar(value)!
        for name in ["docs/a\(scalar)b.txt", "\(scalar)", "\(scalar)docs/readme.txt", "docs/readme.txt\(scalar)"] {
            expectEqual(verdict(name), .unsafePath, "U+\(String(value, radix: 16)) in \(name.debugDescription)")
        }
    }

    @Test("the Trojan Source name is refused: invoice<U+202E>fdp.exe")
    func trojanSource() {
        expectEqual(verdict("invoice\u{202E}fdp.exe"), .unsafePath)
    }

    @Test("the joiners and the variation selectors pass: Persian, Indic scripts and emoji need them", arguments: [
        "❤️.txt", "a\u{200C}b", "a\u{200D}b", "👩\u{200D}💻.png", "می\u{200C}خواهم.txt", "क्\u{200D}ष.txt",
        "x\u{FE00}", "x\u{FE0E}", "x\u{E0100}", "x\u{E01EF}", "café.txt",
    ])
    func allowed(_ name: String) {
        expectEqual(verdict(name), nil)
    }

    /// The generated table against the standard library's own Unicode properties, for
    /// every code point both know (assigned in the table's Unicode version or before).
    @Test("the generated set is exactly Bidi_Control, Default_Ignorable_Code_Point, Cf, Zl and Zp, less the exceptions")
    func matchesUnicodeProperties() {
        let version = InvisibleScalars.unicodeVersion.split(separator: ".").compactMap { Int($0) }
        var mismatches: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), let age = scalar.properties.age,
                  (age.major, age.minor) <= (version[0], version[1]) else { continue }
            let properties = scalar.properties
            let category = properties.generalCategory
            let expected = (properties.isBidiControl || properties.isDefaultIgnorableCodePoint
                || category == .format || category == .lineSeparator || category == .paragraphSeparator)
                && !(value == 0x200C || value == 0x200D || (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value))
            if InvisibleScalars.contains(scalar) != expected { mismatches.append("U+" + String(value, radix: 16)) }
        }
        expect(mismatches.isEmpty, "\(mismatches.prefix(20))")
    }

    @Test("escaping for a person: each invisible scalar as \\u{XXXX}, the rest as it is")
    func displayEscaping() {
        expectEqual(DisplayText.escaping("invoice\u{202E}fdp.exe"), "invoice\\u{202E}fdp.exe")
        expectEqual(DisplayText.escaping("a\u{200B}\u{FEFF}\u{E0041}"), "a\\u{200B}\\u{FEFF}\\u{E0041}")
        expectEqual(DisplayText.escaping("❤️ a\u{200D}b"), "❤️ a\u{200D}b")
        let escaped = EscapedName(Array("x\u{2066}y\\".utf8))
        expectEqual(escaped.text, "x\u{2066}y\\\\")
        expectEqual(escaped.shown, "x\\u{2066}y\\\\")
        expectEqual("\(escaped)", escaped.shown)
    }

    @Test("shown names stay apart: the real character and its spelled-out escape differ")
    func injective() {
        let names = ["a\u{202E}b", "a\\u{202E}b", "a\\\u{202E}b", "a\\\\u{202E}b"]
        expectEqual(Set(names.map { EscapedName(Array($0.utf8)).shown }).count, names.count)
    }
}
