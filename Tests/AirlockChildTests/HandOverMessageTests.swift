import AirlockChild
import AirlockTestSupport
import Testing

@Suite("The message a decoder template is sent per drop: one encoder, one decoder")
struct HandOverMessageTests {
    @Test("arguments survive the round trip, empty and non-ASCII ones included")
    func roundTrip() {
        for arguments in [[], ["zip", "--limit-cpu=30", "", "class_name=NotesApp.Mémo"], [""]] {
            let message = HandOverMessage(arguments: arguments)
            expectEqual(HandOverMessage(decoding: message.encoded), message, "\(arguments)")
        }
    }

    @Test("another version, a last argument without its NUL, bytes that are not UTF-8 and nothing at all are refused")
    func malformed() {
        expectEqual(HandOverMessage(decoding: [2] + Array("zip".utf8) + [0]), nil)
        expectEqual(HandOverMessage(decoding: [1] + Array("zip".utf8)), nil)
        expectEqual(HandOverMessage(decoding: [1, 0xFF, 0xFE, 0]), nil)
        expectEqual(HandOverMessage(decoding: []), nil)
    }

    @Test("the check a template makes before it forks accepts exactly what decoding reads")
    func wellFormed() {
        let samples: [[UInt8]] = [
            [], [1], [2, 0], [1, 0], [1, 0, 0], [1] + Array("zip".utf8), [1] + Array("zip".utf8) + [0],
            [1, 0xFF, 0xFE, 0], [1, 0xC3, 0, 0xA9, 0], [1, 0xC3, 0xA9, 0], [1, 0xED, 0xA0, 0x80, 0], [1, 0xC0, 0xAF, 0],
            [1, 0xF0, 0x9F, 0x98, 0x80, 0], [1, 0xF4, 0x90, 0x80, 0x80, 0], HandOverMessage(arguments: ["a", "", "Mémo"]).encoded,
        ]
        for bytes in samples {
            expectEqual(HandOverMessage.isWellFormed(bytes), (HandOverMessage(decoding: bytes) != nil), "\(bytes)")
        }
    }
}
