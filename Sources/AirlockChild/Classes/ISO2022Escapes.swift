import AirlockSystem

/// ISO-2022-JP's switches to ASCII and to JIS Roman (`ESC ( B`, `ESC ( J`),
/// which a browser reading a file as ISO-2022-JP (by its `encoding=` or
/// `charset=`, or by guessing) drops without a trace: `onl␛(Boad=` is
/// `onload=` to it, and `<scr␛(Bipt>` a script element. The markup search reads
/// every file without them, whatever its encoding; anywhere else they are
/// control bytes no markup holds. (ISO-2022-JP is the one encoding browsers
/// still decode whose switches leave ASCII letters as they are; the others
/// that had such shifts decode to nothing but replacement characters now.)
struct ISO2022Escapes {
    private static let escape: UInt8 = 0x1B
    /// An `ESC`, or `ESC (`, at the end of the last chunk: the start of a switch, perhaps.
    private var held: [UInt8] = []

    /// Whether `chunk` goes to the search as it is: nothing held, no `ESC` in it.
    func isClear(_ chunk: UnsafeRawBufferPointer) -> Bool {
        held.isEmpty && ByteSearch.firstIndex(of: Self.escape, in: chunk) == nil
    }

    /// What was held and `chunk`, without the switches, less a switch's start at its end (held for the next).
    mutating func strip(_ chunk: UnsafeRawBufferPointer) -> [UInt8] {
        var bytes = held
        held.removeAll()
        bytes.append(contentsOf: chunk)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == Self.escape else {
                out.append(byte)
                index += 1
                continue
            }
            let rest = bytes.count - index
            if rest < 3, rest == 1 || bytes[index + 1] == UInt8(ascii: "(") {
                held = Array(bytes[index...])
                break
            }
            if bytes[index + 1] == UInt8(ascii: "("), bytes[index + 2] == UInt8(ascii: "B") || bytes[index + 2] == UInt8(ascii: "J") {
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    /// What is held at the end of the file, which no switch followed.
    mutating func rest() -> [UInt8] {
        defer { held.removeAll() }
        return held
    }
}
