import AirlockConfiguration
import AirlockTestSupport
import Foundation
import Testing

@Suite("Configuration text: syntax errors by line and column, duplicate keys and trailing commas refused")
struct ConfigurationTextTests {
    func message(_ text: String) -> String? {
        do {
            _ = try Configuration(json: Data(text.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    @Test("each syntax error names its line and column", arguments: [
        ("{\n  \"policy\": {\n    \"max_entries\": 5\n  ,\n}", 5, 1),
        ("{\n  \"policy\": {\"max_entries\": 5,}\n}", 2, 31),
        ("{\"watch\": {\"workers\": [1, 2,]}}", 1, 29),
        ("{\n\"policy\": {\n\"max_entries\" 5}}", 3, 15),
        ("{\"policy\": ", 1, 11),
        ("{\"root\": \"/srv\" \"policy\": {}}", 1, 24),
        ("", 1, 0),
    ])
    func syntax(_ text: String, _ line: Int, _ column: Int) throws {
        let found = try #require(message(text), "\(text) was accepted")
        expect(found.contains("line \(line), column \(column):"), "\(found)")
    }

    @Test("a key given twice is an error naming the key, at any depth", arguments: [
        (#"{"policy": {"max_entries": 5, "max_entries": 6}}"#, "max_entries"),
        (#"{"watch": {}, "watch": {}}"#, "watch"),
        (#"{"root": "/a",\#n "root": "/b"}"#, "root"),
    ])
    func duplicates(_ text: String, _ key: String) throws {
        let found = try #require(message(text), "\(text) was accepted")
        expect(found.contains("a key given twice"), "\(found)")
        expect(found.contains("'\"\(key)\"'"), "\(found)")
    }

    @Test("a wrong value names the key, the value and the range")
    func wrongValue() throws {
        let found = try #require(message("{\n  \"watch\": {\"workers\": 4096}\n}"))
        expect(found.contains("watch.workers"))
        expect(found.contains("4096"))
        expect(found.contains("1 to 1024, or \"auto\""), "\(found)")
        let typed = try #require(message(#"{"decoder": {"cpu_seconds": "ten"}}"#))
        expect(typed.contains("decoder.cpu_seconds") && typed.contains("\"ten\"") && typed.contains("1 to 86400"), "\(typed)")
    }

    @Test("the comment keys init writes, one per setting, still decode")
    func comments() throws {
        let written = Configuration().rendered()
        expect(written.contains("\"// max_entries\""))
        try expectEqual(Configuration(json: Data(written.utf8)), Configuration())
    }
}
