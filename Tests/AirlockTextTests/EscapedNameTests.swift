import AirlockTestSupport
import AirlockText
import Testing

@Suite("Escaping hostile names for logs and reports")
struct EscapedNameTests {
    @Test("printable UTF-8 stays, backslashes double, controls and invalid bytes become \\xHH", arguments: [
        (Array("café/a.txt".utf8), "café/a.txt"),
        (Array("a\\b".utf8), "a\\\\b"),
        ([0x61, 0x00, 0x62], "a\\x00b"),
        ([0x61, 0x0A], "a\\x0a"),
        ([0xFF, 0x61], "\\xffa"),
        ([0xC2, 0x85], "\\xc2\\x85"),
    ])
    func escapes(_ input: [UInt8], _ expected: String) {
        expectEqual(EscapedName(input).text, expected)
    }

    @Test("two different byte strings never escape alike")
    func injective() {
        let names: [[UInt8]] = [[0x5C, 0x78, 0x66, 0x66], [0xFF], [0x5C, 0x5C, 0x78, 0x66, 0x66], [0x5C], [0x5C, 0x5C]]
        expectEqual(Set(names.map { EscapedName($0).text }).count, names.count)
    }

    /// Every byte string of up to two bytes, and random longer ones, escaped from an
    /// array (contiguous: the printable-ASCII shortcut may answer) and from a
    /// collection that is not (always the byte-by-byte loop): the same text, and
    /// the same strict UTF-8 verdict.
    @Test("the shortcut for contiguous bytes gives what the byte-by-byte loop gives")
    func shortcutAgrees() {
        var inputs: [[UInt8]] = [[]]
        for first in UInt8.min...UInt8.max {
            inputs.append([first])
            for second: UInt8 in [0x00, 0x1F, 0x20, 0x2F, 0x41, 0x5C, 0x7E, 0x7F, 0x80, 0xA9, 0xC3, 0xFF] { inputs.append([first, second]) }
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = Array(0x20...0x7E) + [0x00, 0x0A, 0x5C, 0x7F, 0x80, 0xC3, 0xA9, 0xE2, 0x80, 0x8B, 0xF0, 0x9F]
        for _ in 0..<2000 {
            inputs.append((0..<Int.random(in: 1...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        for input in inputs {
            let spread = input.lazy.map { $0 }
            expectEqual(EscapedName(input).text, EscapedName(spread).text, "\(input)")
            expectEqual(UTF8Scalar.string(input), UTF8Scalar.string(spread), "\(input)")
        }
    }
}
