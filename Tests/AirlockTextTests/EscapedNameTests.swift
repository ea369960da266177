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
}
