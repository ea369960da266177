import AirlockConfiguration
import AirlockEvents
@testable import AirlockIntake
import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("A quota rejection's detail names the setting to raise")
struct QuotaKeysTests {
    @Test("a quota rejection names the key of its limit, from the table")
    func quotaKeys() {
        let cases: [(Reason, String, String?)] = [
            (.ratioTooHigh, "zip", "policy.max_ratio (for entries over policy.ratio_min_bytes)"),
            (.dropTooLarge, "zip", "policy.max_drop_bytes"), (.dropTooLarge, "keyed", "keyed.max_bytes"),
            (.tooManyEntries, "keyed", "keyed.max_items"), (.tooDeep, "tar", "policy.max_depth"), (.unsafePath, "zip", nil),
        ]
        for (reason, format, keys) in cases {
            var rejection = Rejection(reason, "")
            rejection.format = format
            expectEqual(QuotaKeys.keys(for: rejection), keys, "\(reason)")
            if let keys { expect(Configuration.numericSettings.contains { keys.hasPrefix($0.name) }) }
        }
    }
}
