import AirlockConfiguration
import AirlockQuarantine
import AirlockTestSupport
import Foundation
import Testing

@Suite("Settings: every number has a range, checked when the file is read")
struct SettingBoundsTests {
    static let names = Configuration.numericSettings.map(\.name)

    static func setting(_ name: String) -> NumericSetting {
        Configuration.numericSettings.first { $0.name == name }!
    }

    /// `{"section": {"key": VALUE}}` with VALUE spelled as JSON.
    func decode(_ setting: NumericSetting, _ value: String) throws(ConfigurationError) -> Configuration {
        try Configuration(json: Data(settingDocument(setting.section, setting.key, value).utf8))
    }

    func expectRefused(_ setting: NumericSetting, _ value: String, mentioning: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let configuration = try decode(setting, value)
            Issue.record("\(setting.name) = \(value) was accepted as \(String(describing: setting.value(in: configuration)))",
                         sourceLocation: sourceLocation)
        } catch {
            expect(error.message.hasPrefix(setting.name + ": "), "\(error.message)", sourceLocation: sourceLocation)
            for text in mentioning {
                expect(error.message.contains(text), "\(error.message) lacks \(text)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("the default lies within the range", arguments: names)
    func defaultInRange(_ name: String) throws {
        let setting = Self.setting(name)
        if let value = setting.value(in: Configuration()) { expect(setting.range.contains(value)) }
    }

    @Test("the maximum and the minimum are accepted as they are", arguments: names)
    func bounds(_ name: String) throws {
        let setting = Self.setting(name)
        try expectEqual(setting.value(in: decode(setting, String(setting.range.upperBound))), setting.range.upperBound)
        try expectEqual(setting.value(in: decode(setting, String(setting.range.lowerBound))), setting.range.lowerBound)
    }

    @Test("just past either end is refused with the key, the value and the range", arguments: names)
    func pastTheEnds(_ name: String) {
        let setting = Self.setting(name)
        let range = "\(setting.range.lowerBound) to \(setting.range.upperBound)"
        expectRefused(setting, String(setting.range.upperBound + 1), mentioning: [String(setting.range.upperBound + 1), range])
        expectRefused(setting, String(setting.range.lowerBound - 1), mentioning: [String(setting.range.lowerBound - 1), range])
    }

    @Test("absurd values are refused, never wrapped or trapped", arguments: names)
    func absurd(_ name: String) {
        let setting = Self.setting(name)
        for value in ["1e300", "-1e300", "-1", "5e18", "9223372036854775807", "9223372036854775808",
                      "18446744073709551616", "1e14", "-9223372036854775808"] {
            expectRefused(setting, value, mentioning: ["outside the allowed range"])
        }
        for value in ["1.5", "0.5", "\"10\"", "true", "null", "[1]", "{}"] {
            expectRefused(setting, value, mentioning: ["must be an integer"])
        }
    }

    @Test("every setting at its maximum at once decodes, renders and decodes back")
    func allAtMaximum() throws {
        var sections: [String: [String: Any]] = [:]
        for setting in Configuration.numericSettings { sections[setting.section, default: [:]][setting.key] = setting.range.upperBound }
        // The nested section, with the keys it cannot do without.
        var publish = sections.removeValue(forKey: "publish.nats") ?? [:]
        publish["servers"] = ["nats://127.0.0.1:4222"]
        publish["stream"] = "AIRLOCK"
        var document: [String: Any] = sections
        document["publish"] = ["nats": publish]
        let configuration = try Configuration(json: JSONSerialization.data(withJSONObject: document))
        for setting in Configuration.numericSettings { expectEqual(setting.value(in: configuration), setting.range.upperBound) }
        try expectEqual(Configuration(json: Data(configuration.rendered().utf8)), configuration)
    }

    @Test("the README's configuration table gives every setting's range")
    func documented() throws {
        let readme = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        let rows = readme.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for setting in Configuration.numericSettings {
            let row = rows.first { $0.hasPrefix("| `\(setting.name)` |") }
            expect(row != nil, "README has no row for \(setting.name)")
            let bounds = setting.bounds.replacingOccurrences(of: "\"auto\"", with: "`\"auto\"`")
            expectEqual(row?.contains("| \(bounds) |"), true, "README's row for \(setting.name) does not say \(bounds)")
        }
    }

    @Test("keys beginning with // are comments; other unknown keys are still refused")
    func comments() throws {
        try expectEqual(Configuration(json: Data(#"{"// note": 1, "watch": {"// workers": "x"}}"#.utf8)), Configuration())
        #expect(throws: ConfigurationError.self) { try Configuration(json: Data(#"{"watch": {"/workers": 2}}"#.utf8)) }
    }

    @Test("path settings are bounded too")
    func pathSettings() {
        let long = String(repeating: "a", count: Configuration.maxPathSettingBytes + 1)
        for text in [#"{"root": "\#(long)"}"#, #"{"metrics": {"path": "\#(long)"}}"#, #"{"metrics": {"path": "a\u0000b"}}"#] {
            #expect(throws: ConfigurationError.self) { try Configuration(json: Data(text.utf8)) }
        }
        let names = (0...Configuration.maxClassNames).map { "\"M\($0)\"" }.joined(separator: ",")
        #expect(throws: ConfigurationError.self) { try Configuration(json: Data(#"{"keyed": {"class_names": [\#(names)]}}"#.utf8)) }
    }
}

@Suite("Durations on the command line: bounded, never overflowing")
struct DurationTests {
    @Test("units, the longest accepted, and what is refused")
    func durations() {
        expectEqual(DurationText.seconds("30s"), 30)
        expectEqual(DurationText.seconds("2w"), 1_209_600)
        expectEqual(DurationText.seconds("36500d"), DurationText.maxSeconds)
        for text in ["36501d", "5215w", "99999999999999999w", "9223372036854775807d", "9223372036854775807s",
                     "99999999999999999999s", "-1d", "+1d", "1.5d", "d", "", "7", "7x", " 7d", "7d "] {
            expectEqual(DurationText.seconds(text), nil, "\(text)")
        }
    }
}
