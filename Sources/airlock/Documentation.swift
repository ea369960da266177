import AirlockConfiguration
import AirlockPolicy
import Foundation

/// The parts of airlock(1), airlock.json(5) and the bash completion that the
/// command table (Help.commands), the settings tables (Configuration's
/// numericSettings and otherSettings) and the reason codes (Reason) define,
/// generated from them so that a command, option, setting or reason is one edit.
///
/// A man page's source marks each generated region with two scdoc comments,
/// `; generated: NAME` and `; end of generated text` (the README with the same
/// words in HTML comments); `airlock help --man FILE` prints FILE with every
/// region rewritten, and `airlock help --completion` prints the whole
/// completion script. `make docs` writes them back, and a test fails while the
/// committed files differ from what the tables give.
enum Documentation {
    enum Output: Equatable {
        case manPage(path: String)
        case completion

        /// `help --man FILE` or `help --completion`; nil for any other arguments.
        init?(_ arguments: [String]) {
            switch arguments {
            case ["help", "--completion"]: self = .completion
            case let words where words.count == 3 && words[0] == "help" && words[1] == "--man": self = .manPage(path: words[2])
            default: return nil
            }
        }
    }

    /// The lines that open and close a region, in scdoc and in Markdown.
    static let markers = [(start: "; generated: ", end: "; end of generated text", close: ""),
                          (start: "<!-- generated: ", end: "<!-- end of generated text -->", close: " -->")]

    /// The lines of the generated region `name`; nil for a name there is none of.
    static func region(_ name: String) -> [String]? {
        switch name {
        case "synopsis": return synopsis()
        case "commands": return commands()
        case "reasons": return reasons()
        case "settings": return settings()
        case "settings-table": return settingsTable()
        default: return nil
        }
    }

    static func run(_ output: Output) -> Int32 {
        switch output {
        case .completion:
            print(BashCompletion.script, terminator: "")
            return ExitStatus.ok
        case .manPage(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                CommandRunner.log.error("\(path): cannot read it")
                return 66
            }
            do {
                print(try filled(String(decoding: data, as: UTF8.self)), terminator: "")
                return ExitStatus.ok
            } catch {
                CommandRunner.log.error("\(path): \(error)")
                return ExitStatus.dataError
            }
        }
    }

    struct RegionError: Error, CustomStringConvertible {
        let description: String
    }

    /// `text` with the lines of every generated region replaced by what the tables give now.
    static func filled(_ text: String) throws(RegionError) -> String {
        var output: [String] = []
        var inside: (name: String, end: String)?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let open = inside {
                guard line == open.end else { continue }
                output += region(open.name)!
                output.append(line)
                inside = nil
            } else if let marker = markers.first(where: { line.hasPrefix($0.start) && line.hasSuffix($0.close) }) {
                let name = String(line.dropFirst(marker.start.count).dropLast(marker.close.count))
                guard region(name) != nil else { throw RegionError(description: "no generated region '\(name)'") }
                output.append(line)
                inside = (name, marker.end)
            } else {
                output.append(line)
            }
        }
        if let inside { throw RegionError(description: "the region '\(inside.name)' has no '\(inside.end)'") }
        return output.joined(separator: "\n")
    }

    /// Text for scdoc: `*`, `_` and `\` written so that scdoc prints them as they are.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            if "*_\\".contains(character) { result.append("\\") }
            result.append(character)
        }
        return result
    }

    /// One line of Markdown (the settings' docs) in scdoc: `code` in bold, the rest escaped.
    static func scdoc(markdown: String) -> String {
        markdown.split(separator: "`", omittingEmptySubsequences: false).enumerated().map { index, part in
            index % 2 == 1 && !part.isEmpty ? "*" + escaped(String(part)) + "*" : escaped(String(part))
        }.joined()
    }

    /// A synopsis in scdoc: literal words (commands, actions, options) in bold,
    /// placeholders (upper case) underlined, brackets, bars and ellipses as they are.
    static func scdoc(synopsis: String) -> String {
        var result = "", word = ""
        func flush() {
            guard !word.isEmpty else { return }
            let placeholder = word.contains { $0.isUppercase } && !word.contains { $0.isLowercase }
            result += placeholder ? "_" + escaped(word) + "_" : "*" + escaped(word) + "*"
            word = ""
        }
        for character in synopsis {
            if character.isLetter || character.isNumber || character == "-" {
                word.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return result
    }

    /// SYNOPSIS of airlock(1): every form of every command.
    static func synopsis() -> [String] {
        Help.commands.flatMap { command in
            [command.synopsis.map { "*airlock* " + scdoc(synopsis: $0) }.joined(separator: "++\n"), ""]
        }
    }

    /// COMMANDS of airlock(1): each command's forms, summary and options.
    static func commands() -> [String] {
        var lines: [String] = []
        for command in Help.commands {
            lines.append(command.synopsis.map { scdoc(synopsis: $0) }.joined(separator: "++\n"))
            lines.append("\t" + escaped(command.summary))
            for (option, sentence) in command.options {
                lines += ["", "\t" + scdoc(synopsis: option) + ": " + escaped(sentence)]
            }
            lines.append("")
        }
        return lines
    }

    /// REASON CODES of airlock(1): every code a rejection carries.
    static func reasons() -> [String] {
        [Reason.allCases.map { "*" + $0.rawValue + "*" }.joined(separator: ", ") + ".", ""]
    }

    /// Every setting with its default (as `airlock init` writes it; nil where it
    /// writes none), the values it takes and what it does, in the order the file lists them.
    static func settingEntries() -> [(name: String, defaultValue: String?, bounds: String, doc: String)] {
        let defaults = Configuration()
        var entries: [(name: String, defaultValue: String?, bounds: String, doc: String)] =
            Configuration.otherSettings.filter { $0.path.section == nil }.map { ($0.name, $0.value(in: defaults), $0.bounds, $0.doc) }
        for section in Configuration.sections + ["publish.nats"] {
            for setting in Configuration.numericSettings where setting.section == section {
                let value = setting.acceptsAuto && setting.value(in: defaults) == nil ? "\"auto\"" : setting.value(in: defaults).map(String.init)
                entries.append((setting.name, value, setting.bounds.replacingOccurrences(of: "\"auto\"", with: "`\"auto\"`"), setting.doc))
            }
            for setting in Configuration.otherSettings where setting.path.section == section {
                entries.append((setting.name, setting.value(in: defaults), setting.bounds, setting.doc))
            }
        }
        return entries
    }

    /// KEYS of airlock.json(5): each setting, what it does, its default and the values it takes.
    static func settings() -> [String] {
        settingEntries().flatMap { entry in
            let shown = entry.defaultValue.map { "*" + escaped($0) + "*" } ?? "none"
            return ["*" + escaped(entry.name) + "*",
                    "\t" + sentence(scdoc(markdown: entry.doc)) + " Default: \(shown). Allowed: \(scdoc(markdown: entry.bounds)).", ""]
        }
    }

    /// The README's table of settings: key, default, the values allowed and what it does.
    static func settingsTable() -> [String] {
        ["| key | default | allowed | meaning |", "| --- | --- | --- | --- |"] + settingEntries().map { entry in
            let shown = entry.defaultValue.map { $0.hasPrefix("\"") || $0.hasPrefix("[") ? "`" + $0 + "`" : $0 } ?? "(none)"
            return "| `\(entry.name)` | \(shown) | \(entry.bounds) | \(entry.doc) |"
        }
    }

    /// `text` with a capital first letter and a full stop at the end.
    static func sentence(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
    }
}
