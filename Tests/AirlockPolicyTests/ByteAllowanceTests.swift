import AirlockPolicy
import AirlockTestSupport
import Testing

/// One entry's data fed through `allowance` in chunks of the given sizes: how
/// much was admitted, and the rule that stopped it, if one did.
private func feed(_ allowance: inout ByteAllowance, _ chunks: [Int64], declared: Int64? = nil,
                  compressed: Int64? = nil) -> (written: Int64, breach: ByteAllowance.Breach?) {
    var written: Int64 = 0
    for chunk in chunks {
        if let breach = allowance.admit(chunk, after: written, declared: declared, compressed: compressed) {
            return (written, breach)
        }
        written += chunk
    }
    return (written, nil)
}

private func policy(file: Int64 = 1000, total: Int64 = 2500, ratio: Int64 = 100, ratioMin: Int64 = 1 << 20) -> Policy {
    var policy = Policy()
    policy.maxFileBytes = file
    policy.maxTotalBytes = total
    policy.maxRatio = ratio
    policy.ratioMinBytes = ratioMin
    return policy
}

@Suite("Byte allowance: file, declared, total and ratio quotas hold across chunk boundaries, inclusive, without overflow")
struct ByteAllowanceTests {
    static let chunkings: [[Int64]] = [[1000], [999, 1], [1, 999], [250, 250, 250, 250], [0, 1000, 0]]

    @Test("a file of exactly max_file_bytes is admitted however it is chunked; one byte more is not", arguments: chunkings)
    func fileLimit(chunks: [Int64]) {
        var allowance = ByteAllowance(policy: policy())
        expect(feed(&allowance, chunks) == (1000, nil))
        var over = ByteAllowance(policy: policy())
        let result = feed(&over, chunks + [1])
        expect(result == (1000, .fileTooLarge))
        expectEqual(over.total, 1000, "the refused byte is not counted")
    }

    @Test("the chunk that crosses the file limit is refused whole, wherever the limit falls in it")
    func chunkAcrossTheFileLimit() {
        var allowance = ByteAllowance(policy: policy())
        expect(feed(&allowance, [600, 401]) == (600, .fileTooLarge))
        expectEqual(allowance.total, 600)
    }

    @Test("the total counts every entry: exactly max_total_bytes is admitted, one byte more stops the drop")
    func totalAcrossEntries() {
        var allowance = ByteAllowance(policy: policy())
        expect(feed(&allowance, [500, 500]) == (1000, nil))
        expect(feed(&allowance, [999, 1]) == (1000, nil))
        expect(feed(&allowance, [250, 249]) == (499, nil))
        expectEqual(allowance.total, 2499)
        expect(feed(&allowance, [1]) == (1, nil))
        expectEqual(allowance.total, 2500)
        expect(feed(&allowance, [0]) == (0, nil), "an empty chunk fits even a spent allowance")
        expect(feed(&allowance, [1]) == (0, .totalTooLarge))
        expectEqual(allowance.total, 2500)
    }

    @Test("an entry may hold exactly what its header declares, across chunks; one byte more is corrupt")
    func declaredSize() {
        var allowance = ByteAllowance(policy: policy())
        expect(feed(&allowance, [100, 200], declared: 300) == (300, nil))
        expect(feed(&allowance, [100, 200, 1], declared: 300) == (300, .pastDeclaredSize))
        expect(feed(&allowance, [1], declared: 0) == (0, .pastDeclaredSize))
        expect(feed(&allowance, [1], declared: -1) == (0, .pastDeclaredSize), "a negative declared size is a lie, not a trap")
        expect(feed(&allowance, [1], declared: Int64.min) == (0, .pastDeclaredSize))
        expectEqual(allowance.total, 600)
    }

    @Test("the ratio is judged past ratio_min_bytes, on the entry's bytes so far, inclusive")
    func ratio() {
        var allowance = ByteAllowance(policy: policy(file: 1 << 30, total: 1 << 31, ratio: 10, ratioMin: 1000))
        expect(feed(&allowance, [1000], compressed: 1) == (1000, nil), "at ratio_min_bytes the ratio is not judged")
        expect(feed(&allowance, [1000, 1], compressed: 1) == (1000, .ratioTooHigh))
        expect(feed(&allowance, [1500, 500], compressed: 200) == (2000, nil), "exactly 10x")
        expect(feed(&allowance, [1500, 500, 1], compressed: 200) == (2000, .ratioTooHigh))
        expect(feed(&allowance, [5000], compressed: Int64.max) == (5000, nil), "a limit past Int64.max is no limit, not a trap")
        expect(feed(&allowance, [5000], compressed: -5) == (0, .ratioTooHigh), "a negative compressed size counts as none")
    }

    @Test("the rules are checked file, declared size, total, then ratio")
    func order() {
        var allowance = ByteAllowance(policy: policy(file: 3000, total: 2500, ratio: 10, ratioMin: 0))
        expect(feed(&allowance, [3001], declared: 10, compressed: 1) == (0, .fileTooLarge))
        expect(feed(&allowance, [2600], declared: 10, compressed: 1) == (0, .pastDeclaredSize))
        expect(feed(&allowance, [2600], declared: 3000, compressed: 1) == (0, .totalTooLarge))
        expect(feed(&allowance, [2500], declared: 3000, compressed: 1) == (0, .ratioTooHigh))
        expectEqual(allowance.total, 0)
    }

    @Test("limits at Int64.max: the allowance fills to the last byte and refuses the next, without overflow")
    func limitsAtInt64Max() {
        let top = Int64.max
        var allowance = ByteAllowance(policy: policy(file: top, total: top, ratio: top, ratioMin: top))
        expect(feed(&allowance, [top - 1, 1], declared: top, compressed: top) == (top, nil))
        expectEqual(allowance.total, top)
        expectEqual(allowance.admit(1, after: top, declared: top, compressed: top), .fileTooLarge)
        expectEqual(allowance.admit(top, after: 1, declared: nil, compressed: nil), .fileTooLarge)
        expectEqual(allowance.admit(1, after: 0, declared: nil, compressed: nil), .totalTooLarge)
        expectEqual(allowance.admit(0, after: top, declared: top, compressed: 1), nil)
        var fresh = ByteAllowance(policy: policy(file: top, total: top, ratio: top, ratioMin: 0))
        expectEqual(fresh.admit(top, after: 0, declared: nil, compressed: 2), nil, "2 x Int64.max overflows: no ratio can be broken")
        expectEqual(fresh.admit(1, after: top - 1, declared: top - 1, compressed: nil), .pastDeclaredSize)
    }

    @Test("a zero limit admits empty chunks only")
    func zeroLimits() {
        var allowance = ByteAllowance(policy: policy(file: 0, total: 0))
        expect(feed(&allowance, [0, 0]) == (0, nil))
        expect(feed(&allowance, [0, 1]) == (0, .fileTooLarge))
    }
}
