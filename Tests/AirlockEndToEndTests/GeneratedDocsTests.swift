import AirlockTestSupport
import Foundation
import Testing

/// The man pages' generated regions and the bash completion are what the
/// command, settings and reason tables give now: a command, option, setting or
/// reason added to a table and not to the committed docs (`make docs`) fails here.
@Suite("Generated docs: airlock(1), airlock.json(5) and the completion follow the tables")
struct GeneratedDocsTests {
    static let manPages = ["man/airlock.1.scd", "man/airlock.json.5.scd"]
    static let completionScript = Binary.repository.appendingPathComponent("completion/airlock.bash")
    static let bashCompletion = "/usr/share/bash-completion/bash_completion"

    static func committed(_ path: String) throws -> String {
        try String(contentsOf: Binary.repository.appendingPathComponent(path), encoding: .utf8)
    }

    @Test("each man page's generated regions, and the README's, are what airlock help --man gives (run make docs after changing a table)",
          arguments: manPages + ["README.md"])
    func manPage(_ path: String) throws {
        let result = try airlock(["help", "--man", Binary.repository.appendingPathComponent(path).path])
        expectEqual(result.status, 0, "\(result.stderr)")
        let committed = try Self.committed(path)
        expect(committed.contains("; generated: "), "\(path) has no generated region")
        expectEqual(result.stdout, committed, "\(path) differs from the tables: run make docs")
    }

    @Test("the committed completion is what airlock help --completion gives (run make docs after changing a table)")
    func completion() throws {
        let result = try airlock(["help", "--completion"])
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.stdout, (try Self.committed("completion/airlock.bash")), "completion/airlock.bash differs: run make docs")
        try expectEqual(runTool("/bin/bash", ["-n", Self.completionScript.path]).status, 0)
    }

    @Test("every command, its actions and its options are in airlock(1) and the completion")
    func everyCommand() throws {
        let page = try Self.committed("man/airlock.1.scd")
        let script = try Self.committed("completion/airlock.bash")
        let words = Set(script.split { !($0.isLetter || $0 == "-") }.map(String.init))
        for command in HelpTests.commands {
            expect(page.contains("*airlock* *\(command)*"), "airlock(1)'s synopsis lacks \(command)")
            expect(script.contains("        \(command))\n"), "the completion lacks \(command)")
            let usage = try airlock(["help", command]).stdout
            let synopsis = usage.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
            for line in synopsis {
                let all = line.split(separator: " ")
                guard let name = all.firstIndex(of: Substring(command)) else { continue }
                let rest = all[(name + 1)...]
                if let action = rest.first, action.allSatisfy({ $0.isLowercase }) {
                    expect(page.contains("*airlock* *\(command)* *\(action)*"), "airlock(1) lacks \(command) \(action)")
                    expect(words.contains(String(action)), "the completion lacks \(command) \(action)")
                }
                for option in rest where option.hasPrefix("[--") || option.hasPrefix("--") {
                    let name = option.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                    expect(page.contains("*\(name)*"), "airlock(1) lacks \(command) \(name)")
                    expect(words.contains(name), "the completion lacks \(command) \(name)")
                }
            }
        }
    }

    @Test("help --man refuses a missing file (66) and a region it does not know (65)")
    func badInput() throws {
        let sandbox = try Sandbox()
        let missing = try airlock(["help", "--man", sandbox.base.appendingPathComponent("absent.scd").path])
        expectEqual(missing.status, 66, "\(missing.stderr)")
        let page = sandbox.base.appendingPathComponent("page.scd")
        try Data("x(1)\n\n; generated: nonsense\n; end of generated text\n".utf8).write(to: page)
        let unknown = try airlock(["help", "--man", page.path])
        expectEqual(unknown.status, 65, "\(unknown.stderr)")
        expect(unknown.stderr.contains("nonsense"), "\(unknown.stderr)")
        try Data("x(1)\n\n; generated: reasons\n".utf8).write(to: page)
        let unended = try airlock(["help", "--man", page.path])
        expectEqual(unended.status, 65, "\(unended.stderr)")
    }

    @Test("scdoc renders both pages", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/scdoc"), "needs scdoc"),
          arguments: manPages)
    func renders(_ path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/scdoc")
        process.standardInput = try FileHandle(forReadingFrom: Binary.repository.appendingPathComponent(path))
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let roff = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        expectEqual(process.terminationStatus, 0, "scdoc refused \(path)")
        expect(String(decoding: roff, as: UTF8.self).contains(".TH "), "\(path)")
    }

    /// What the completion offers for the command line `line` (the cursor at its end).
    func offered(_ line: String) throws -> Set<String> {
        let script = """
            source \(Self.bashCompletion)
            source \(Self.completionScript.path)
            COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<< "$COMP_LINE"
            [[ "$COMP_LINE" == *' ' ]] && COMP_WORDS+=('')
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            _airlock airlock "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf 'offered:%s\\n' "${COMPREPLY[@]}"
            """
        let result = try runTool("/bin/bash", ["-c", script])
        expectEqual(result.status, 0, "\(line): \(result.output)")
        return Set(result.output.split(separator: "\n").filter { $0.hasPrefix("offered:") }.map { String($0.dropFirst(8)) }.filter { !$0.isEmpty })
    }

    @Test("the completion offers events, quarantine contents, every reason and each command's options",
          .enabled(if: FileManager.default.fileExists(atPath: bashCompletion), "needs bash-completion"))
    func completes() throws {
        try expectEqual(offered("airlock ev"), ["events"])
        try expect(offered("airlock quarantine ").isSuperset(of: ["list", "show", "contents", "release", "purge", "reindex"]))
        try expectEqual(offered("airlock quarantine list --reason ma"), ["malware-found"])
        try expect(offered("airlock quarantine list --reason ").isSuperset(of: ["unreadable-drop", "disallowed-type", "type-mismatch", "malware-found"]))
        try expectEqual(offered("airlock events --"), ["--follow", "--after", "--root", "--config"])
        try expect(offered("airlock quarantine purge x --") .isSuperset(of: ["--reason", "--dry-run", "--older-than"]))
        try expectEqual(offered("airlock outbox "), ["sweep"])
        try expectEqual(offered("airlock help ev"), ["events"])
    }
}
