import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Writing notices: the bytes a decoder says it wrote are read back exactly, and nothing else is read as one")
struct WritingNoticeTests {
    @Test("a count survives its line", arguments: [Int64(1), WritingNotice.step, 4_194_305, 999_999_999_999_999_999])
    func roundTrip(_ bytes: Int64) {
        let line = WritingNotice.line(bytes: bytes)
        expectEqual(line.last, 0x0A)
        expect(line.dropLast().allSatisfy { $0 != 0x0A })
        expectEqual(WritingNotice.bytes(in: line.dropLast()[...]), bytes)
    }

    @Test("malformed lines name no count", arguments: [
        #"{"writing":}"#, #"{"writing":-4}"#, #"{"writing":4 }"#, #"{"writing":4"#, #"{"writing":0x10}"#,
        #"{"writing":1234567890123456789}"#, #"{"written":"61"}"#, #"{"progress":1,"total":2}"#,
    ])
    func malformed(_ text: String) {
        expectEqual(WritingNotice.bytes(in: Array(text.utf8)[...]), nil)
    }
}
