@testable import AirlockConfiguration
import AirlockPolicy
import AirlockQuarantine
import AirlockTestSupport
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

    /// Every setting in the table, with its allowed values as the README spells them, and what it does.
    static let table: [(name: String, bounds: String, doc: String)] =
        Configuration.numericSettings.map { ($0.name, $0.bounds.replacingOccurrences(of: "\"auto\"", with: "`\"auto\"`"), $0.doc) }
        + Configuration.otherSettings.map { ($0.name, $0.bounds, $0.doc) }

    /// The README's configuration table: key, default and allowed values, row by row.
    static func readmeRows() throws -> [(name: String, defaultValue: String, allowed: String, meaning: String)] {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex(of: "| key | default | allowed | meaning |"), "README has no configuration table")
        return lines[(header + 2)...].prefix { $0.hasPrefix("| ") }.map { row in
            let cells = row.components(separatedBy: " | ")
            let unquoted = { (cell: String) in cell.hasPrefix("`") && cell.hasSuffix("`") ? String(cell.dropFirst().dropLast()) : cell }
            let meaning = cells.count > 3 ? cells[3...].joined(separator: " | ") : ""
            return (String(cells[0].dropFirst(2)).trimmingCharacters(in: CharacterSet(charactersIn: "`")),
                    unquoted(cells[1]), cells.count > 2 ? cells[2] : "", meaning.hasSuffix(" |") ? String(meaning.dropLast(2)) : meaning)
        }
    }

    @Test("every key is defined once, and says what it does")
    func unique() {
        expectEqual(Set(Self.table.map(\.name)).count, Self.table.count)
        for setting in Self.table { expect(setting.doc.count > 10, "\(setting.name) has no doc line") }
    }

    @Test("airlock.json(5) has an entry for every key of the table and no other")
    func manPage() throws {
        let page = try String(contentsOf: Self.repository.appendingPathComponent("man/airlock.json.5.scd"), encoding: .utf8)
        let entries = page.split(separator: "\n").filter { $0.hasPrefix("*") && $0.hasSuffix("*") && !$0.contains(" ") }
            .map { $0.dropFirst().dropLast().replacingOccurrences(of: "\\_", with: "_") }
        expectEqual(entries.sorted(), Self.table.map(\.name).sorted(), "run make docs")
        // Keys the hand-written text names (in bold) must be keys of the table too.
        let sections = Set(Configuration.sections + ["publish"])
        for name in ["man/airlock.1.scd", "man/airlock.json.5.scd"] {
            let text = try String(contentsOf: Self.repository.appendingPathComponent(name), encoding: .utf8)
                .replacingOccurrences(of: "\\*", with: "")
            for (index, piece) in text.split(separator: "*", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
                let word = piece.replacingOccurrences(of: "\\_", with: "_")
                guard let dot = word.firstIndex(of: "."), sections.contains(String(word[..<dot])),
                      word.allSatisfy({ $0.isLowercase || $0 == "." || $0 == "_" }) else { continue }
                expect(Self.table.contains { $0.name == word || $0.name.hasPrefix(word + ".") }, "\(name) names \(word), which is no key")
            }
        }
    }

    @Test("a report's policy in force holds the keys of the policy section, and quarantine show lists them as before")
    func reportPolicy() {
        let policy = RejectionReport.PolicyInForce(Policy())
        let keys = Mirror(reflecting: policy).children.compactMap(\.label)
        let section = Configuration.numericSettings.filter { $0.section == "policy" }.map(\.key)
            + Configuration.otherSettings.filter { $0.path.section == "policy" }.map(\.path.key)
        expectEqual(keys.sorted(), section.sorted())
        expectEqual(policy.text, "file_mode=0644 max_component_bytes=255 max_depth=32 max_drop_bytes=104857600 max_entries=1000 "
                + "max_file_bytes=20971520 max_path_bytes=1024 max_ratio=100 max_total_bytes=104857600 ratio_min_bytes=1048576")
    }

    /// Targets beneath the one that holds the tables: they cannot reach a
    /// setting's name, so their messages spell the keys they mention.
    static let targetsBelowTheTables: Set<String> = [
        "AirlockText", "AirlockSystem", "AirlockPolicy", "AirlockFormats", "AirlockChild", "AirlockZip", "AirlockArchive",
        "AirlockKeyed", "AirlockEvents", "airlock-decoder", "airlock-keyed-decoder", "CAirlockShims",
    ]

    /// Whether `text` holds `key` as a word of its own (not `configuration.watch.completion`).
    static func spells(_ text: Substring, _ key: String) -> Bool {
        var rest = text[...]
        while let found = rest.range(of: key) {
            let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
            let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
            if !(before.map { $0.isLetter || $0 == "." || $0 == "_" } ?? false), !(after.map { $0.isLetter || $0 == "_" } ?? false) {
                return true
            }
            rest = text[found.upperBound...]
        }
        return false
    }

    @Test("no string in the code that can reach the tables spells a key again: it takes the setting's name")
    func keysSpelledOnce() throws {
        let keys = Self.table.map(\.name).filter { $0.contains(".") }.sorted { $0.count > $1.count }
        let sources = Self.repository.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var spelled: [String] = []
        for case let file as URL in files where file.pathExtension == "swift" {
            let target = file.path.dropFirst(sources.path.count + 1).split(separator: "/").first.map(String.init) ?? ""
            guard !Self.targetsBelowTheTables.contains(target),
                  !["Settings.swift", "SettingDefinitions.swift"].contains(file.lastPathComponent) else { continue }
            for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n").enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? "" : line
                // The text between quotes: every other piece when split at unescaped quotes.
                let pieces = code.replacingOccurrences(of: "\\\"", with: "").split(separator: "\"", omittingEmptySubsequences: false)
                for (index, piece) in pieces.enumerated() where index % 2 == 1 {
                    if let key = keys.first(where: { Self.spells(piece, $0) }) {
                        spelled.append("\(file.lastPathComponent):\(number + 1): \(key)")
                    }
                }
            }
        }
        expect(spelled.isEmpty, "keys spelled outside the tables: \(spelled)")
    }

    @Test("airlock(1), the completion and the README's reason codes list every reason code")
    func reasons() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "\n## Reason codes\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        for reason in Reason.allCases { expect(section.contains("`\(reason.rawValue)`"), "README's reason codes lack \(reason.rawValue)") }
        let page = try String(contentsOf: Self.repository.appendingPathComponent("man/airlock.1.scd"), encoding: .utf8)
        let completion = try String(contentsOf: Self.repository.appendingPathComponent("completion/airlock.bash"), encoding: .utf8)
        for reason in Reason.allCases {
            expect(page.contains("*\(reason.rawValue)*"), "airlock(1) lacks \(reason.rawValue): run make docs")
            expect(completion.contains(" \(reason.rawValue) ") || completion.contains("\"\(reason.rawValue) ")
                    || completion.contains(" \(reason.rawValue)\""), "the completion lacks \(reason.rawValue): run make docs")
        }
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
            expectEqual(names.count, Set(names).count)
            let expected = Set(Self.table.map(\.name).filter { withPublish || !Self.isPublishKey($0) })
            let extra = Set(names).subtracting(expected), missing = expected.subtracting(names)
            expect(missing.isEmpty && extra.isEmpty, "not in the table: \(extra.sorted()); not in the file: \(missing.sorted())")
        }
        try expectEqual(Configuration(json: Data(publishing.rendered().utf8)), publishing)
        expectEqual(example, configuration.rendered(), "etc/airlock.json is not what airlock init writes for the root /var/lib/airlock")
    }

    @Test("the README's table has one row per key, giving the allowed values of the table and the default airlock init writes")
    func readme() throws {
        let rows = try Self.readmeRows()
        expectEqual(rows.count, Set(rows.map(\.name)).count, "a key has two rows")
        let missing = Set(Self.table.map(\.name)).subtracting(rows.map(\.name)), extra = Set(rows.map(\.name)).subtracting(Self.table.map(\.name))
        expect(missing.isEmpty && extra.isEmpty, "not in the README: \(missing.sorted()); not in the table: \(extra.sorted())")
        let defaults = Dictionary(uniqueKeysWithValues: renderedValues(Configuration().rendered()).map { ($0.name, $0.value) })
        for row in rows {
            if let setting = Self.table.first(where: { $0.name == row.name }) {
                expectEqual(row.allowed, setting.bounds, "README's row for \(row.name) allows \(row.allowed), the table \(setting.bounds)")
                expectEqual(row.meaning, setting.doc, "README's row for \(row.name) says \(row.meaning), the table \(setting.doc)")
            }
            expect(defaults[row.name] ?? "(none)" == row.defaultValue, "README's default for \(row.name) is \(row.defaultValue), airlock init writes \(defaults[row.name] ?? "(none)")")
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
            expect(error.message.hasPrefix(name + ": "), "\(error.message)")
        }
    }

    @Test("a choice setting takes each of its values, renders it back, and names them all when refusing another",
          arguments: Configuration.otherSettings.filter { if case .choice = $0.kind { true } else { false } }.map(\.name))
    func choices(_ name: String) throws {
        let setting = try #require(Configuration.otherSettings.first { $0.name == name })
        guard case .choice(let values) = setting.kind else { return }
        for value in values {
            let configuration = try Self.decode(setting, "\"\(value)\"")
            expectEqual(renderedValues(configuration.rendered()).first { $0.name == name }?.value, "\"\(value)\"")
        }
        do {
            _ = try Self.decode(setting, "\"other\"")
            Issue.record("\(name) = \"other\" was accepted")
        } catch {
            for value in values { expect(error.message.contains("\"\(value)\""), "\(error.message)") }
        }
    }
}
