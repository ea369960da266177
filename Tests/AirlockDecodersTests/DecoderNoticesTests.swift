@testable import AirlockDecoders
import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("The supervisor takes the child's notices off the front of its output and leaves the verdict")
struct DecoderNoticesTests {
    @Test("writing, written, progress and taken lines each reach their reader, in order; the verdict is left whole")
    func eachNoticeToItsReader() {
        var heard: [String] = []
        let verdict = Array(#"{"outcome":"accepted"}"#.utf8)
        let output = WritingNotice.line(bytes: 4_194_304) + WrittenFileNotice.line(for: Array("a/b".utf8))
            + Array(#"{"progress":7,"total":9}"#.utf8) + [0x0A] + TakenNotice.line + WritingNotice.line(bytes: 5_000_000) + verdict
        let rest = DecoderProcess.takeNotices(output, progress: { heard.append("progress \($0)/\($1)") },
                                              written: { heard.append("written " + String(decoding: $0, as: UTF8.self)) },
                                              taken: { heard.append("taken \($0)") }, writing: { heard.append("writing \($0)") })
        expectEqual(rest, verdict)
        expectEqual(heard, ["writing 4194304", "written a/b", "progress 7/9", "taken \(VerdictMessage.currentVersion)", "writing 5000000"])
    }

    @Test("a writing notice cut off by the read stays for the next, and a malformed one is dropped unheard")
    func partialAndMalformed() {
        var heard: [Int64] = []
        let partial = Array(#"{"writing":41"#.utf8)
        expect(DecoderProcess.mayStartWithNotice(partial))
        expectEqual(DecoderProcess.takeNotices(partial, progress: nil, written: nil, writing: { heard.append($0) }), partial)
        let malformed = Array("{\"writing\":4x}\n".utf8) + WritingNotice.line(bytes: 9)
        expectEqual(DecoderProcess.takeNotices(malformed, progress: nil, written: nil, writing: { heard.append($0) }), [])
        expectEqual(heard, [9])
    }
}
