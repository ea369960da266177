@testable import AirlockKeyed
import AirlockPolicy
import AirlockTestSupport
import Foundation
import Testing

/// The keyed template's warm-up decodes a memo built into the program; a copy
/// that drifted from the fixture, or stopped decoding, would leave every child
/// paying Foundation's first uses again without any failure to show it.
@Suite("Keyed warm-up: the built-in memo is the fixture, and it decodes and renders")
struct KeyedWarmUpTests {
    @Test("the built-in memo is byte for byte fixtures/keyed/memo-binary.plist, and decodes to a memo that renders")
    func builtInMemo() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/keyed/memo-binary.plist")
        try expectEqual([UInt8](Data(contentsOf: fixture)), KeyedWarmUp.memo)
        guard case .memo(let decoded) = KeyedDecoder(settings: KeyedSettings()).decode(Data(KeyedWarmUp.memo)) else {
            Issue.record("the built-in memo does not decode")
            return
        }
        let rendered = try MemoRendering.render([decoded], asArray: false)
        try MemoRendering.verify(rendered, [decoded], asArray: false)
    }
}
