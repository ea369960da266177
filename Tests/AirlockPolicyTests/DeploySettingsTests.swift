import AirlockCore
import AirlockDecoding
import Foundation
import Testing

@Suite("Deployment settings: decoder confinement")
struct DeploySettingsTests {
    @Test("decoder.confinement is required unless set to best-effort; anything else names the key")
    func confinementSetting() throws {
        #expect(Configuration().decoderConfinementRequired)
        #expect(try Configuration(json: Data(#"{"decoder": {"confinement": "best-effort"}}"#.utf8)).decoderConfinementRequired == false)
        #expect(try Configuration(json: Data(#"{"decoder": {"confinement": "required"}}"#.utf8)).decoderConfinementRequired)
        do {
            _ = try Configuration(json: Data(#"{"decoder": {"confinement": "off"}}"#.utf8))
            Issue.record("accepted confinement \"off\"")
        } catch {
            #expect(error.message.hasPrefix("decoder.confinement:"), "\(error.message)")
        }
    }

    @Test("the child's arguments carry the confinement mode; without it the child requires confinement", arguments: [true, false])
    func limitsRoundTrip(_ required: Bool) throws {
        let limits = DecoderLimits(addressSpaceBytes: 1 << 30, cpuSeconds: 60, openFiles: 64, fileSizeBytes: 99, requiresConfinement: required)
        var arguments = limits.arguments + ["max_entries=5"]
        #expect(DecoderLimits(taking: &arguments) == limits)
        #expect(arguments == ["max_entries=5"])
        var without = limits.arguments.filter { !$0.hasPrefix("--confinement=") }
        #expect(DecoderLimits(taking: &without)?.requiresConfinement == true)
        var twice = limits.arguments + ["--confinement=best-effort"]
        #expect(DecoderLimits(taking: &twice) == nil)
        var unknown = limits.arguments.filter { !$0.hasPrefix("--confinement=") } + ["--confinement=maybe"]
        #expect(DecoderLimits(taking: &unknown) == nil)
    }
}
