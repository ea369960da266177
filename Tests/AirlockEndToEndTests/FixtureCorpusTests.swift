import AirlockTestSupport
import Foundation
import Testing

@Suite("Fixture corpus: every committed archive reaches its manifest verdict with the invariants intact")
struct FixtureCorpusTests {
    @Test("the manifest is not empty and covers every archive reason code")
    func manifestCoversReasons() {
        let reasons = Set(FixtureCase.all.compactMap(\.reason))
        for reason in ["unsafe-path", "unsupported-entry-type", "duplicate-path", "path-conflict", "name-collision",
                       "name-too-long", "too-deep", "too-many-entries", "file-too-large", "total-too-large",
                       "ratio-too-high", "corrupt-archive", "encrypted-entry", "unsupported-format"] {
            expect(reasons.contains(reason), "no fixture for \(reason)")
        }
        expect(FixtureCase.all.filter { $0.verdict == "accepted" }.count >= 10)
    }

    /// One root and one `run --once` per policy the manifest names, each case's
    /// verdict checked on its own drop (every issue names the case).
    @Test("run --once ends every drop where the manifest says", arguments: PolicyBatch.of(FixtureCase.all, policy: \.policy))
    func corpusCases(_ batch: PolicyBatch<FixtureCase>) throws {
        try expectCorpusVerdicts(batch)
    }
}
