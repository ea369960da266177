import AirlockTestSupport
import Foundation
import Testing

@Suite("Help and usage errors: every command's usage on request, one line on a mistake")
struct HelpTests {
    static let commands = ["init", "run", "check-path", "inspect", "doctor", "quarantine", "history", "status", "events", "publish", "outbox", "help", "version"]

    /// The options a usage's synopsis lines name, such as `--root` or `--once`.
    func synopsisOptions(_ text: String) -> Set<String> {
        let synopsis = text.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
        var found: Set<String> = []
        for line in synopsis {
            for word in line.split(whereSeparator: { " [|]".contains($0) }) where word.hasPrefix("--") {
                found.insert(String(word))
            }
        }
        return found
    }

    @Test("help COMMAND and COMMAND --help print the same usage, a sentence per option, on stdout, exit 0", arguments: commands)
    func commandHelp(_ command: String) throws {
        let asked = try airlock(["help", command])
        expectEqual(asked.status, 0, "\(asked.stderr)")
        expect(asked.stderr.isEmpty, "\(asked.stderr)")
        expect(asked.stdout.hasPrefix("usage: airlock \(command)"), "\(asked.stdout)")
        for flag in ["--help", "-h"] where command != "help" {
            let viaFlag = try airlock([command, flag])
            expectEqual(viaFlag.status, 0, "\(command) \(flag): \(viaFlag.stderr)")
            expectEqual(viaFlag.stdout, asked.stdout, "\(command) \(flag) differs from help \(command)")
        }
        let lines = asked.stdout.split(separator: "\n").map(String.init)
        for option in synopsisOptions(asked.stdout) {
            let explained = lines.first { $0.hasPrefix("  \(option) ") || $0 == "  \(option)" }
            expect(explained != nil, "\(command): \(option) has no sentence")
            expect(explained?.hasSuffix(".") == true || explained?.hasSuffix(")") == true, "\(command): \(explained ?? "")")
        }
        if !["help", "version", "check-path", "init"].contains(command) {
            expect(asked.stdout.contains("  --root DIR "), "\(command) works on a root and says how to name it")
        }
    }

    @Test("--help after other options and anywhere before -- still asks for help")
    func helpAmongOptions() throws {
        let result = try airlock(["quarantine", "list", "--json", "--help"])
        expectEqual(result.status, 0)
        expect(result.stdout.hasPrefix("usage: airlock quarantine list"))
        let operand = try airlock(["check-path", "--", "--help"])
        expectEqual(operand.status, 0, "after -- it is a name to judge")
        expectEqual(operand.stdout, "ok\t--help\n", "\(operand.stdout)")
    }

    @Test("airlock --help, -h and help list every command")
    func overview() throws {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = try airlock(arguments)
            expectEqual(result.status, 0)
            expect(result.stderr.isEmpty)
            for command in Self.commands {
                expect(result.stdout.contains("\n  \(command) "), "\(arguments) does not list \(command)")
            }
        }
    }

    /// Each command's parser reads every option it knows before it looks at the
    /// rest, and traps on one its help entry does not list: an unknown option
    /// being a plain usage error shows the help lists every option the parser reads.
    @Test("every command's parser reads only options its help lists", arguments: commands.filter { !["help", "version", "check-path"].contains($0) })
    func parserOptionsInHelp(_ command: String) throws {
        let result = try airlock([command, "--bogus"])
        expectEqual(result.status, 64, "\(command): \(result.status) \(result.stderr)")
        expect(result.stderr.contains("unknown option '--bogus'"), "\(command): \(result.stderr)")
    }

    @Test("the list gives each command's first sentence whole, not cut at a dot inside a word")
    func firstSentences() throws {
        let overview = try airlock(["help"]).stdout
        let initLine = try #require(overview.split(separator: "\n").first { $0.hasPrefix("  init ") })
        expect(initLine.contains("airlock.json"), "\(initLine)")
        for command in Self.commands {
            let line = try #require(overview.split(separator: "\n").first { $0.hasPrefix("  \(command) ") })
            expect(line.hasSuffix("."), "\(line)")
            expect(line.count < 160, "\(command)'s first sentence is too long for a list: \(line)")
        }
    }

    @Test("airlock version and the Debian package's changelog name the same version")
    func version() throws {
        let changelog = try String(contentsOf: Binary.repository.appendingPathComponent("debian/changelog"), encoding: .utf8)
        let first = try #require(changelog.split(separator: "\n").first)
        let version = try #require(first.split(separator: "(").dropFirst().first?.split(separator: ")").first)
        let printed = try airlock(["version"])
        expectEqual(printed.stdout, "airlock \(version)\n", "debian/changelog says \(version), airlock says \(printed.stdout)")
    }

    @Test("a usage error is one line on stderr naming the problem and the help to read, exit 64", arguments: [
        ([String](), "no command given", "'airlock help'"),
        (["frobnicate"], "unknown command 'frobnicate'", "'airlock help'"),
        (["help", "frobnicate"], "no command 'frobnicate'", "'airlock help'"),
        (["init", "--bogus"], "unknown option '--bogus'", "'airlock help init'"),
        (["run", "--once", "--bogus"], "unknown option '--bogus'", "'airlock help run'"),
        (["check-path"], "needs at least one NAME", "'airlock help check-path'"),
        (["inspect", "a", "b"], "exactly one FILE", "'airlock help inspect'"),
        (["doctor", "extra"], "unexpected argument 'extra'", "'airlock help doctor'"),
        (["quarantine", "frob"], "unknown quarantine action 'frob'", "'airlock help quarantine'"),
        (["quarantine"], "quarantine needs list, show, contents, release, purge or reindex", "'airlock help quarantine'"),
        (["outbox", "tidy"], "outbox takes exactly: sweep", "'airlock help outbox'"),
        (["quarantine", "list", "--since", "7y"], "'7y' is not a duration", "'airlock help quarantine'"),
        (["history", "--id"], "--id needs a value", "'airlock help history'"),
        (["status", "--root", "a", "--config", "b"], "not both", "'airlock help status'"),
    ])
    func usageError(_ arguments: [String], _ problem: String, _ pointer: String) throws {
        let result = try airlock(arguments)
        expectEqual(result.status, 64, "\(arguments) → \(result.status)")
        expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        expectEqual(lines.count, 1, "\(arguments): \(result.stderr)")
        expect(result.stderr.hasPrefix("airlock: error: "))
        expect(result.stderr.contains(problem), "\(arguments): \(result.stderr)")
        expect(result.stderr.contains(pointer), "\(arguments): \(result.stderr)")
        expect(!result.stderr.contains("usage:"))
    }
}
