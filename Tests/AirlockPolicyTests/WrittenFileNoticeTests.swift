import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Written-file notices: the path a decoder names is read back byte for byte, and nothing else is read as one")
struct WrittenFileNoticeTests {
    @Test("any bytes, a newline and a quote among them, survive the line", arguments: [
        Array("big.bin".utf8), Array("deep/er/big.bin".utf8), [0x0A, 0x22, 0x5C, 0x00, 0xFF, 0x2F],
    ])
    func roundTrip(_ path: [UInt8]) {
        let line = WrittenFileNotice.line(for: path)
        expectEqual(line.last, 0x0A)
        expect(line.dropLast().allSatisfy { $0 != 0x0A })
        expectEqual(WrittenFileNotice.path(in: line.dropLast()[...]), path)
    }

    @Test("malformed lines name no path", arguments: [
        #"{"written":"abc"}"#, #"{"written":"6G"}"#, #"{"written":"6162"} "#, #"{"written":"6162""#,
        #"{"progress":1,"total":2}"#, #"{"written":"4A"}"#,
    ])
    func malformed(_ text: String) {
        expectEqual(WrittenFileNotice.path(in: Array(text.utf8)[...]), nil)
    }
}
