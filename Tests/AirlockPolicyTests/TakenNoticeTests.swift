import AirlockPolicy
import AirlockTestSupport
import Testing

/// The line that makes a child's verdict count: pinned, and read back strictly.
@Suite("The taken notice: what a child says once it holds its drop and reads it next")
struct TakenNoticeTests {
    @Test("the line is pinned and names this build's verdict version")
    func pinned() {
        expectEqual(TakenNotice.line, Array("{\"taken\":3}\n".utf8))
        expectEqual(TakenNotice.version(in: TakenNotice.line.dropLast()[...]), VerdictMessage.currentVersion)
    }

    @Test("another version is read as such; anything else is no notice",
          arguments: [("{\"taken\":7}", Int64?.some(7)), ("{\"taken\":}", nil), ("{\"taken\":-1}", nil), ("{\"taken\":1", nil),
                      ("{\"taken\":1 }", nil), ("{\"taken\":\"1\"}", nil), ("{\"taken\":99999999999999999999}", nil)])
    func parsed(_ line: String, _ version: Int64?) {
        expectEqual(TakenNotice.version(in: Array(line.utf8)[...]), version)
    }
}
