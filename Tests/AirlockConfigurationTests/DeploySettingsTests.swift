import AirlockChild
import AirlockConfiguration
import AirlockTestSupport
import Foundation
import Testing

@Suite("Deployment settings: decoder confinement")
struct DeploySettingsTests {
    @Test("decoder.confinement is required unless set to best-effort; anything else names the key")
    func confinementSetting() throws {
        expect(Configuration().decoderConfinementRequired)
        try expectEqual(Configuration(json: Data(#"{"decoder": {"confinement": "best-effort"}}"#.utf8)).decoderConfinementRequired, false)
        try expect(Configuration(json: Data(#"{"decoder": {"confinement": "required"}}"#.utf8)).decoderConfinementRequired)
        do {
            _ = try Configuration(json: Data(#"{"decoder": {"confinement": "off"}}"#.utf8))
            Issue.record("accepted confinement \"off\"")
        } catch {
            expect(error.message.hasPrefix("decoder.confinement:"), "\(error.message)")
        }
    }

    @Test("the child's request carries the confinement mode; a request without it is refused", arguments: [true, false])
    func limitsRoundTrip(_ required: Bool) throws {
        var configuration = Configuration()
        configuration.decoderConfinementRequired = required
        let request = configuration.decoderRequest(mode: .decode, format: "zip")
        try expectEqual(DecoderRequest(decoding: request.encoded).limits.requiresConfinement, required)
        let without = request.encoded.filter { !$0.hasPrefix("confinement=") }
        #expect(throws: DecoderRequest.Refusal.missing(.confinement)) { try DecoderRequest(decoding: without) }
    }

    @Test("outbox modes default to the policy's, take octal modes a consumer cannot write through, and a group that exists")
    func outboxSettings() throws {
        let defaults = Configuration().outboxModes
        expectEqual(defaults, OutboxModes(fileMode: 0o644, directoryMode: 0o755, group: nil))
        let set = try Configuration(json: Data(#"{"outbox": {"file_mode": "0640", "directory_mode": "0750", "group": "root"}}"#.utf8))
        expectEqual(set.outboxModes, OutboxModes(fileMode: 0o640, directoryMode: 0o750, group: 0))
        try expectEqual(Configuration(json: Data(set.rendered().utf8)), set)
        let private_ = try Configuration(json: Data(#"{"policy": {"file_mode": "0600"}}"#.utf8))
        expectEqual(private_.outboxModes, OutboxModes(fileMode: 0o600, directoryMode: 0o700, group: nil))
        for (text, key) in [(#"{"outbox": {"file_mode": "0664"}}"#, "outbox.file_mode"), (#"{"outbox": {"file_mode": "0755"}}"#, "outbox.file_mode"),
                            (#"{"outbox": {"file_mode": "0400"}}"#, "outbox.file_mode"), (#"{"outbox": {"directory_mode": "0770"}}"#, "outbox.directory_mode"),
                            (#"{"outbox": {"directory_mode": "1755"}}"#, "outbox.directory_mode"), (#"{"outbox": {"directory_mode": "755"}}"#, "outbox.directory_mode"),
                            (#"{"outbox": {"group": "no-such-group-here"}}"#, "outbox.group")] {
            do {
                _ = try Configuration(json: Data(text.utf8))
                Issue.record("accepted \(text)")
            } catch {
                expect(error.message.hasPrefix(key + ":"), "\(error.message)")
            }
        }
    }
}
