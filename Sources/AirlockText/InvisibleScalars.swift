/// Code points that change how a name looks, or hide part of it, without being seen:
/// bidirectional controls (U+202E shows `invoice\u{202E}fdp.exe` as `invoiceexe.pdf`,
/// the "Trojan Source" class, CVE-2021-42574), isolates, line and paragraph
/// separators, zero-width spaces, the byte order mark, interlinear annotation
/// marks, tag characters, Hangul fillers.
///
/// The set is Unicode's own: every code point that is Bidi_Control or
/// Default_Ignorable_Code_Point or of general category Cf, Zl or Zp (the generated
/// `ranges`), except what scripts and emoji need to be spelled at all: the
/// joiners U+200C and U+200D (Persian, Indic scripts, emoji sequences) and the
/// variation selectors U+FE00–U+FE0F and U+E0100–U+E01EF (`❤️` is U+2764 U+FE0F).
public enum InvisibleScalars {
    /// Whether `scalar` is one the path policy refuses and human-readable output escapes.
    public static func contains(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if isAllowed(value) { return false }
        // Binary search over the [low, high] pairs.
        var low = 0
        var high = ranges.count / 2
        while low < high {
            let middle = (low + high) / 2
            if value < ranges[2 * middle] {
                high = middle
            } else if value > ranges[2 * middle + 1] {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }

    /// The exceptions: the zero-width non-joiner and joiner, and both blocks of
    /// variation selectors.
    static func isAllowed(_ value: UInt32) -> Bool {
        value == 0x200C || value == 0x200D || (0xFE00...0xFE0F).contains(value) || (0xE0100...0xE01EF).contains(value)
    }

    /// Whether `text` holds any scalar `contains` refuses.
    public static func occur(in text: String) -> Bool {
        text.unicodeScalars.contains(where: contains)
    }
}

/// Text for a person to read (a log line, a table, `status`): every invisible
/// scalar (see `InvisibleScalars`) becomes `\u{XXXX}`, so what a terminal shows is
/// what the name holds. Applied to text whose names `EscapedName` has already
/// escaped, it keeps them apart: a backslash a name holds is doubled there, so
/// `\u{202E}` can only come from here. JSON outputs keep the exact string instead.
public enum DisplayText {
    public static func escaping(_ text: String) -> String {
        guard InvisibleScalars.occur(in: text) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if InvisibleScalars.contains(scalar) {
                out.append(contentsOf: "\\u{\(hex(scalar.value))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Upper-case hex, at least four digits, as Unicode writes code points.
    public static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
