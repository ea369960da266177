@testable import AirlockIntake
import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Outbox names: the archive suffix a drop's name loses")
struct OutboxNameTests {
    @Test("lzip and legacy lzma tars lose their suffixes in the outbox name")
    func outboxSuffixes() {
        let policy = Policy()
        expectEqual(OutboxName.base(for: Array("logs.tar.lz".utf8), id: "id", policy: policy), Array("logs".utf8))
        expectEqual(OutboxName.base(for: Array("logs.TAR.LZMA".utf8), id: "id", policy: policy), Array("logs".utf8))
    }
}
