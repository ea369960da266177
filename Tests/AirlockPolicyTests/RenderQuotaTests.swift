import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Render quotas: rendered files obey the file, total and ratio limits, and the free-space bound covers them")
struct RenderQuotaTests {
    static let name = Array("memos.json".utf8)

    @Test("limits are inclusive, checked file, then total, then ratio")
    func limits() {
        var policy = Policy()
        policy.maxFileBytes = 4 << 20
        policy.maxTotalBytes = 6 << 20
        var quota = RenderQuota(policy: policy)
        expectEqual(quota.admit(Self.name, size: 4 << 20, source: 1 << 20), nil)
        expectEqual(quota.admit(Self.name, size: (4 << 20) + 1, source: 1 << 20)?.reason, .fileTooLarge)
        expectEqual(quota.admit(Self.name, size: (2 << 20) + 1, source: 1 << 20)?.reason, .totalTooLarge)
        expectEqual(quota.admit(Self.name, size: 2 << 20, source: 1 << 20), nil)
        expectEqual(quota.total, 6 << 20)
        var ratio = RenderQuota(policy: Policy())
        expectEqual(ratio.admit(Self.name, size: 1 << 20, source: 1), nil, "at ratio_min_bytes the ratio is not judged")
        expectEqual(ratio.admit(Self.name, size: (1 << 20) + 1, source: 10_000)?.reason, .ratioTooHigh)
        expectEqual(ratio.admit(Self.name, size: 1_000_000 + 1, source: 10_000), nil)
    }

    @Test("the bound the supervisor reserves is never less than what the quotas let through", arguments: [0, 1, 5210, 100_000, 1 << 20])
    func boundCoversAdmitted(dropSize: Int) {
        let drop = Int64(dropSize)
        for keep in [false, true] {
            var policy = Policy()
            policy.maxRatio = 10
            let bound = policy.renderedBound(dropSize: drop, keepsOriginal: keep)
            // The largest rendering the quota admits, found by bisection.
            var low: Int64 = 0, high: Int64 = policy.maxTotalBytes + 1
            while low + 1 < high {
                let middle = (low + high) / 2
                var quota = RenderQuota(policy: policy)
                let admitted = quota.admit(Self.name, size: middle, source: drop) == nil
                    && (!keep || quota.admit(Array("original.plist".utf8), size: drop, source: drop) == nil)
                if admitted { low = middle } else { high = middle }
            }
            expect(low + (keep ? drop : 0) <= bound, "drop \(drop), keep \(keep): \(low) admitted, bound \(bound)")
            expect(bound <= policy.maxTotalBytes)
        }
        expectEqual(Policy().renderedBound(dropSize: 5210, keepsOriginal: false), 1 << 20)
    }
}
