import AirlockTestSupport
import Testing

/// The assertions every test target uses: each must fail when its condition
/// fails, and say what a reader needs.
@Suite("Expectations: expectEqual and expect record an issue exactly when they fail")
struct ExpectationsTests {
    @Test("expectEqual records one issue naming both values and the comment, and none when they are equal")
    func equalityFailsWithBothValues() {
        expectEqual([1, 2], [1, 2])
        withKnownIssue {
            expectEqual("landed", "quarantined", "the drop")
        } matching: { issue in
            let said = issue.comments.map(\.rawValue).joined()
            return said.contains("\"landed\" is not \"quarantined\"") && said.contains("the drop")
        }
    }

    @Test("expect records one issue with its comment when the condition is false, and none when it holds")
    func conditionFailsWithTheComment() {
        expect(1 < 2)
        withKnownIssue {
            expect(2 < 1, "two is not below one")
        } matching: { issue in
            issue.comments.map(\.rawValue).joined() == "two is not below one"
        }
    }
}
