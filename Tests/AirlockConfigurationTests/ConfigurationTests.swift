import AirlockConfiguration
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("Configuration: strict decoding that names the offending key")
struct ConfigurationTests {
    func decode(_ text: String) throws(ConfigurationError) -> Configuration {
        try Configuration(json: Data(text.utf8))
    }

    @Test("an empty object gives every default")
    func defaults() throws {
        try expectEqual(decode("{}"), Configuration())
    }

    @Test("workers \"auto\": more workers than cores, so waits on children and syncs leave no core idle, at most 8 more; a number is taken as it is")
    func workerCount() throws {
        let cores = Processors.online
        let automatic = try decode(#"{"watch": {"workers": "auto"}}"#).workerCount
        expectEqual(automatic, cores + min(cores, 8))
        expect(automatic > cores)
        try expectEqual(decode(#"{"watch": {"workers": 3}}"#).workerCount, 3)
    }

    @Test("what init writes decodes back to the same configuration")
    func roundTrip() throws {
        var configuration = Configuration()
        configuration.root = "/srv/airlock"
        try expectEqual(decode(configuration.rendered()), configuration)
    }

    @Test("overrides are applied")
    func overrides() throws {
        let configuration = try decode(#"{"policy": {"max_entries": 5, "file_mode": "0600"}, "commit": {"sync": "fsync"}}"#)
        expectEqual(configuration.policy.maxEntries, 5)
        expectEqual(configuration.policy.fileMode, 0o600)
        expectEqual(configuration.policy.directoryMode, 0o700)
        expectEqual(configuration.sync, .fsync)
    }

    @Test("bad values name their key", arguments: [
        (#"{"polcy": {}}"#, "polcy"),
        (#"{"policy": {"max_entrys": 3}}"#, "policy.max_entrys"),
        (#"{"policy": {"max_entries": 0}}"#, "policy.max_entries"),
        (#"{"policy": {"max_entries": -4}}"#, "policy.max_entries"),
        (#"{"policy": {"max_entries": 1.5}}"#, "policy.max_entries"),
        (#"{"policy": {"max_entries": "10"}}"#, "policy.max_entries"),
        (#"{"policy": {"max_entries": true}}"#, "policy.max_entries"),
        (#"{"policy": {"file_mode": "0777"}}"#, "policy.file_mode"),
        (#"{"policy": []}"#, "policy"),
        (#"{"decoder": {"timeout_seconds": 0}}"#, "decoder.timeout_seconds"),
        (#"{"commit": {"sync": "never"}}"#, "commit.sync"),
        (#"{"root": 7}"#, "root"),
    ])
    func rejected(_ text: String, _ key: String) {
        do {
            _ = try decode(text)
            Issue.record("accepted \(text)")
        } catch {
            expect(error.message.hasPrefix(key + ":"), "message \(error.message)")
        }
    }

    @Test("text that is not JSON is refused")
    func notJSON() {
        #expect(throws: ConfigurationError.self) { try decode("{policy") }
        #expect(throws: ConfigurationError.self) { try decode("[]") }
    }
}

@Suite("etc/airlock.json: the documented example")
struct ExampleConfigurationTests {
    @Test("spells out every default and decodes strictly")
    func example() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("etc/airlock.json")
        var configuration = try Configuration(json: Data(contentsOf: url))
        expectEqual(configuration.root, "/var/lib/airlock")
        configuration.root = nil
        expectEqual(configuration, Configuration())
        var expected = Configuration()
        expected.root = "/var/lib/airlock"
        expectEqual(String(decoding: try Data(contentsOf: url), as: UTF8.self), expected.rendered())
    }
}
