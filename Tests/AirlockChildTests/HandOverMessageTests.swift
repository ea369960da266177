import AirlockChild
import Testing

@Suite("The message a decoder template is sent per drop: one encoder, one decoder")
struct HandOverMessageTests {
    @Test("arguments survive the round trip, empty and non-ASCII ones included")
    func roundTrip() {
        for arguments in [[], ["zip", "--limit-cpu=30", "", "class_name=NotesApp.Mémo"], [""]] {
            let message = HandOverMessage(arguments: arguments)
            #expect(HandOverMessage(decoding: message.encoded) == message, "\(arguments)")
        }
    }

    @Test("another version, a last argument without its NUL, bytes that are not UTF-8 and nothing at all are refused")
    func malformed() {
        #expect(HandOverMessage(decoding: [2] + Array("zip".utf8) + [0]) == nil)
        #expect(HandOverMessage(decoding: [1] + Array("zip".utf8)) == nil)
        #expect(HandOverMessage(decoding: [1, 0xFF, 0xFE, 0]) == nil)
        #expect(HandOverMessage(decoding: []) == nil)
    }
}
