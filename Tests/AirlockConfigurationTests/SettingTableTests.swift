@testable import AirlockConfiguration
import Foundation
import Testing

/// The keys of a rendered airlock.json (`section.key`, `section.object.key` in a
/// nested section, or the key alone at the top level), comments aside, each with
/// its value as the file spells it.
func renderedValues(_ text: String) -> [(name: String, value: String)] {
    var sections: [String] = []
    var values: [(name: String, value: String)] = []
    for line in text.split(separator: "\n").map(String.init) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("\""), let close = trimmed.dropFirst().firstIndex(of: "\"") else {
            if trimmed.hasPrefix("}") && !sections.isEmpty { sections.removeLast() }
            continue
        }
        let key = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
        var value = String(trimmed[trimmed.index(close, offsetBy: 3)...])
        if value == "{" { sections.append(key); continue }
        if key.hasPrefix("//") { continue }
        if value.hasSuffix(",") { value.removeLast() }
        values.append(((sections + [key]).joined(separator: "."), value))
    }
    return values
}

/// A document setting one key: `{"section": {"key": VALUE}}`, `{"key": VALUE}` at
/// the top level, and for `publish.nats` the nested object with the two keys it
/// cannot do without (unless the key is one of them).
func settingDocument(_ section: String?, _ key: String, _ value: String) -> String {
    guard let section else { return #"{"\#(key)": \#(value)}"# }
    guard section == "publish.nats" else { return #"{"\#(section)": {"\#(key)": \#(value)}}"# }
    var fields = ["servers": #"["nats://127.0.0.1:4222"]"#, "stream": #""AIRLOCK""#]
    fields[key] = value
    let body = fields.keys.sorted().map { #""\#($0)": \#(fields[$0]!)"# }.joined(separator: ", ")
    return #"{"publish": {"nats": {\#(body)}}}"#
}

@Suite("One definition per setting: the table, the parser, etc/airlock.json and the README agree")
struct SettingTableTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every setting in the table, with its allowed values as the README spells them.
    static let table: [(name: String, bounds: String)] =
        Configuration.numericSettings.map { ($0.name, $0.bounds.replacingOccurrences(of: "\"auto\"", with: "`\"auto\"`")) }
        + Configuration.otherSettings.map { ($0.name, $0.bounds) }

    /// The README's configuration table: key, default and allowed values, row by row.
    static func readmeRows() throws -> [(name: String, defaultValue: String, allowed: String)] {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex(of: "| key | default | allowed | meaning |"), "README has no configuration table")
        return lines[(header + 2)...].prefix { $0.hasPrefix("| ") }.map { row in
            let cells = row.components(separatedBy: " | ")
            let unquoted = { (cell: String) in cell.hasPrefix("`") && cell.hasSuffix("`") ? String(cell.dropFirst().dropLast()) : cell }
            return (String(cells[0].dropFirst(2)).trimmingCharacters(in: CharacterSet(charactersIn: "`")),
                    unquoted(cells[1]), cells.count > 2 ? cells[2] : "")
        }
    }

    @Test("every key is defined once")
    func unique() {
        #expect(Set(Self.table.map(\.name)).count == Self.table.count)
    }

    /// Keys of the `publish` section, which is written only when publishing is configured.
    static func isPublishKey(_ name: String) -> Bool { name.hasPrefix("publish.") }

    @Test("etc/airlock.json and the file airlock init writes hold exactly the keys of the table (publish.nats only when configured)")
    func example() throws {
        let example = try String(contentsOf: Self.repository.appendingPathComponent("etc/airlock.json"), encoding: .utf8)
        var configuration = Configuration()
        configuration.root = "/var/lib/airlock"
        var publishing = configuration
        publishing.publish = PublishSettings()
        publishing.publish?.servers = ["nats://127.0.0.1:4222"]
        publishing.publish?.stream = "AIRLOCK"
        for (text, withPublish) in [(example, false), (configuration.rendered(), false), (publishing.rendered(), true)] {
            let names = renderedValues(text).map(\.name)
            #expect(names.count == Set(names).count)
            let expected = Set(Self.table.map(\.name).filter { withPublish || !Self.isPublishKey($0) })
            let extra = Set(names).subtracting(expected), missing = expected.subtracting(names)
            #expect(missing.isEmpty && extra.isEmpty, "not in the table: \(extra.sorted()); not in the file: \(missing.sorted())")
        }
        #expect(try Configuration(json: Data(publishing.rendered().utf8)) == publishing)
    }

    @Test("the README's table has one row per key, giving the allowed values of the table and the default airlock init writes")
    func readme() throws {
        let rows = try Self.readmeRows()
        #expect(rows.count == Set(rows.map(\.name)).count, "a key has two rows")
        let missing = Set(Self.table.map(\.name)).subtracting(rows.map(\.name)), extra = Set(rows.map(\.name)).subtracting(Self.table.map(\.name))
        #expect(missing.isEmpty && extra.isEmpty, "not in the README: \(missing.sorted()); not in the table: \(extra.sorted())")
        let defaults = Dictionary(uniqueKeysWithValues: renderedValues(Configuration().rendered()).map { ($0.name, $0.value) })
        for row in rows {
            if let setting = Self.table.first(where: { $0.name == row.name }) {
                #expect(row.allowed == setting.bounds, "README's row for \(row.name) allows \(row.allowed), the table \(setting.bounds)")
            }
            #expect(defaults[row.name] ?? "(none)" == row.defaultValue, "README's default for \(row.name) is \(row.defaultValue), airlock init writes \(defaults[row.name] ?? "(none)")")
        }
    }

    /// `{"section": {"key": VALUE}}`, or `{"key": VALUE}` at the top level, with VALUE spelled as JSON.
    static func decode(_ setting: SettingDefinition, _ value: String) throws(ConfigurationError) -> Configuration {
        let (section, key) = setting.path
        return try Configuration(json: Data(settingDocument(section, key, value).utf8))
    }

    @Test("the parser reads every key with the type the table gives it", arguments: Configuration.otherSettings.map(\.name))
    func parserTakesTheType(_ name: String) throws {
        let setting = try #require(Configuration.otherSettings.first { $0.name == name })
        let wrong: String
        switch setting.kind {
        case .boolean: wrong = "\"true\""
        case .choice: wrong = "\"none of these\""
        case .text: wrong = "5"
        case .list: wrong = "\"x\""
        }
        do {
            _ = try Self.decode(setting, wrong)
            Issue.record("\(name) = \(wrong) was accepted")
        } catch {
            #expect(error.message.hasPrefix(name + ": "), "\(error.message)")
        }
    }

    @Test("a choice setting takes each of its values, renders it back, and names them all when refusing another",
          arguments: Configuration.otherSettings.filter { if case .choice = $0.kind { true } else { false } }.map(\.name))
    func choices(_ name: String) throws {
        let setting = try #require(Configuration.otherSettings.first { $0.name == name })
        guard case .choice(let values) = setting.kind else { return }
        for value in values {
            let configuration = try Self.decode(setting, "\"\(value)\"")
            #expect(renderedValues(configuration.rendered()).first { $0.name == name }?.value == "\"\(value)\"")
        }
        do {
            _ = try Self.decode(setting, "\"other\"")
            Issue.record("\(name) = \"other\" was accepted")
        } catch {
            for value in values { #expect(error.message.contains("\"\(value)\""), "\(error.message)") }
        }
    }
}
