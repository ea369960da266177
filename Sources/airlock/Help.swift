/// The usage of each command, with a sentence per option: what `airlock help`,
/// `airlock help COMMAND` and `airlock COMMAND --help` print. Every command the
/// parser knows has an entry, and a usage error points at the entry of the
/// command it was about rather than printing all of them.
struct CommandHelp {
    let name: String
    /// One line per form of the command, without the leading `airlock`.
    let synopsis: [String]
    let summary: String
    /// Each option or operand and one sentence saying what it does.
    let options: [(String, String)]

    /// The full usage: synopsis, summary and the options.
    var text: String {
        var lines = synopsis.enumerated().map { ($0 == 0 ? "usage: airlock " : "       airlock ") + $1 }
        lines += ["", summary]
        if !options.isEmpty {
            lines += ["", "options:"]
            let width = options.map(\.0.count).max() ?? 0
            for (option, sentence) in options {
                lines.append("  " + option + String(repeating: " ", count: width - option.count) + "  " + sentence)
            }
        }
        return lines.joined(separator: "\n")
    }
}

enum Help {
    static let rootOptions: [(String, String)] = [
        ("--root DIR", "Works on the root DIR, configured by DIR/airlock.json when it exists (default: the root /etc/airlock/airlock.json names when installed, ./var in a build tree)."),
        ("--config FILE", "Reads the configuration FILE, whose \"root\" key names the root; not with --root."),
    ]
    static let durationNote = "DURATION is a number and a unit, at most 36500d: 30s, 15m, 12h, 7d, 2w."

    static let commands: [CommandHelp] = [
        CommandHelp(name: "init", synopsis: ["init [--root DIR | --config FILE]"],
                    summary: "Lays out inbox/, outbox/, quarantine/ and a private state/ under the root and writes a commented airlock.json; running it again changes nothing.",
                    options: [("--root DIR", "Creates the root at DIR (default: the root /etc/airlock/airlock.json names when installed, ./var in a build tree)."),
                              ("--config FILE", "Lays out the root FILE names, configured by FILE; writes no DIR/airlock.json.")]),
        CommandHelp(name: "run", synopsis: ["run [--root DIR | --config FILE] [--once] [--instance NAME]"],
                    summary: "Watches the inbox and ingests each complete drop: accepted ones go to outbox/, rejected ones to quarantine/ with a report. One JSON line per finished drop goes to standard output, logs to standard error.",
                    options: [("--once", "Processes what the inbox and the claims hold now, then exits (75 if a drop was deferred)."),
                              ("--instance NAME", "Runs as instance NAME of a fleet sharing the root (default: cluster.instance, or the host name with cluster.shared); exits 75 once another instance has taken it over.")] + rootOptions),
        CommandHelp(name: "check-path", synopsis: ["check-path NAME..."],
                    summary: "Prints the path policy's verdict on each archive entry NAME; exits 0 only if all pass, 65 otherwise.",
                    options: [("NAME", "An entry name as an archive would hold it; put -- before names that begin with '-'.")]),
        CommandHelp(name: "inspect", synopsis: ["inspect FILE [--root DIR | --config FILE]"],
                    summary: "Prints, as one JSON line, what ingesting FILE would do, decoding it in the same confined child; writes nothing. Exits 65 for a rejection.",
                    options: [("FILE", "The drop to judge; it is only read.")] + rootOptions),
        CommandHelp(name: "doctor", synopsis: ["doctor [--root DIR | --config FILE] [--json]"],
                    summary: "Starts a decoder child and reports which confinement (Landlock, seccomp, resource limits) is in force on this machine.",
                    options: [("--json", "Prints the findings as one JSON object instead of text.")] + rootOptions),
        CommandHelp(name: "quarantine",
                    synopsis: ["quarantine list [--reason CODE] [--uploader USER] [--since DURATION] [--text TEXT] [--offset N] [--limit N] [--json]",
                               "quarantine show ID [--json]",
                               "quarantine contents ID [--json]",
                               "quarantine release ID [--reason TEXT]",
                               "quarantine purge ID... | --older-than DURATION [--dry-run] [--reason TEXT]",
                               "quarantine reindex"],
                    summary: "Reviews rejected drops: list them, show one's report, list what one's archive holds (names escaped, types, sizes; read from its headers by the confined decoder, never extracted), release one (its original goes back to the inbox to be ingested again) or purge entries for good; reindex rebuilds state/quarantine.index, the list's cache of every report, which list keeps up to date and checks against the quarantine itself. Through the sudo rule airlock ships, members of airlock-view may list, show and read contents, history and status, and members of airlock-review may also release and purge; the journal records who. " + durationNote,
                    options: [("--reason CODE", "list: only entries rejected for this reason code (such as unsafe-path); release, purge: why, in the journal (the Cockpit page requires one)."),
                              ("--uploader USER", "list: only entries the user USER uploaded."),
                              ("--since DURATION", "list: only entries rejected within the last DURATION."),
                              ("--text TEXT", "list: only entries whose id, drop name, offending entry or uploader contains TEXT, in any case."),
                              ("--offset N", "list: skips the newest N entries that match."),
                              ("--limit N", "list: shows at most N entries."),
                              ("--json", "list, show, contents: prints JSON instead of a table or text."),
                              ("--older-than DURATION", "purge: removes every entry rejected longer ago than DURATION, instead of the IDs given."),
                              ("--dry-run", "purge: prints what would be removed and removes nothing.")] + rootOptions),
        CommandHelp(name: "history", synopsis: ["history [--id ID] [--since DURATION] [--limit N] [--json]", "history --per-hour [--since DURATION] [--json]"],
                    summary: "Prints the journal: every drop's verdict and every quarantine action (with who did it), oldest first.",
                    options: [("--id ID", "Only the records about the drop ID."),
                              ("--since DURATION", "Only the records of the last DURATION."),
                              ("--limit N", "Only the newest N records."),
                              ("--per-hour", "Counts instead of records: per UTC hour, event and rejection reason."),
                              ("--json", "Prints each record as a JSON line.")] + rootOptions),
        CommandHelp(name: "status", synopsis: ["status [--json]"],
                    summary: "Says whether a daemon runs on the root and what waits in the inbox, the claims and the quarantine.",
                    options: [("--json", "Prints the status as one JSON object.")] + rootOptions),
        CommandHelp(name: "events", synopsis: ["events [--follow] [--after CURSOR] [--root DIR | --config FILE]"],
                    summary: "Prints the journal's records as JSON Lines, oldest first, each with a cursor; a consumer keeps the last cursor it handled and resumes after it, across restarts and journal rotation, seeing each record once.",
                    options: [("--follow", "Keeps waiting for new records and prints them as they are written."),
                              ("--after CURSOR", "Starts after the record that carried CURSOR instead of at the oldest kept record.")] + rootOptions),
        CommandHelp(name: "publish", synopsis: ["publish [--root DIR | --config FILE]"],
                    summary: "Publishes the journal's outcomes (accepted, rejected, released, purged, a drop's first deferred) to the NATS JetStream stream of publish.nats, each once, following the journal with its own cursor in state/ until SIGTERM; exits 78 without a publish.nats section. Runs airlock-publisher, the one program that talks to the network.",
                    options: rootOptions),
        CommandHelp(name: "outbox", synopsis: ["outbox sweep [--root DIR | --config FILE]"],
                    summary: "Removes the outbox entries consumers have acknowledged (a file acks/GROUP/ID, ID the entry's drop id, newer than the entry), reporting each one it cannot remove and going on with the rest.",
                    options: rootOptions),
        CommandHelp(name: "help", synopsis: ["help [COMMAND]"],
                    summary: "Prints the list of commands, or COMMAND's usage; `airlock COMMAND --help` does the same.",
                    options: []),
        CommandHelp(name: "version", synopsis: ["version"], summary: "Prints airlock's version.", options: []),
    ]

    static func entry(_ name: String) -> CommandHelp? { commands.first { $0.name == name } }

    /// `airlock help` and `airlock --help`: every form of every command.
    static var overview: String {
        var lines = ["usage: airlock COMMAND [OPTION...]", ""]
        let width = commands.map(\.name.count).max() ?? 0
        for command in commands {
            let first = command.summary.split(separator: ".", maxSplits: 1).first.map(String.init) ?? command.summary
            lines.append("  " + command.name + String(repeating: " ", count: width - command.name.count) + "  " + first + ".")
        }
        lines += ["", "Every command that works on a root takes --root DIR or --config FILE, anywhere after the command;",
                  "without either, an installed airlock reads /etc/airlock/airlock.json (PREFIX/etc/airlock/airlock.json",
                  "unless PREFIX is /usr) and a build tree uses ./var.",
                  "'airlock help COMMAND' or 'airlock COMMAND --help' prints a command's options."]
        return lines.joined(separator: "\n")
    }

    /// The help the arguments ask for, if any: `help [COMMAND]`, or `--help` / `-h`
    /// anywhere before `--`. `.some(nil)` means the overview.
    static func requested(_ arguments: [String]) throws(Command.UsageError) -> String?? {
        guard let verb = arguments.first else { return nil }
        if verb == "help" {
            guard arguments.count > 1 else { return .some(nil) }
            guard entry(arguments[1]) != nil else {
                throw Command.UsageError("help: no command '\(arguments[1])' ('airlock help' lists the commands)")
            }
            return .some(arguments[1])
        }
        if verb == "--help" || verb == "-h" { return .some(nil) }
        let options = arguments.dropFirst().prefix { $0 != "--" }
        guard options.contains("--help") || options.contains("-h") else { return nil }
        guard entry(verb) != nil else { return nil }
        return .some(verb)
    }

    /// Where a usage error about `arguments` sends the reader.
    static func pointer(for arguments: [String]) -> String {
        if let verb = arguments.first, verb != "help", entry(verb) != nil {
            return "'airlock help \(verb)' shows its usage"
        }
        return "'airlock help' lists the commands"
    }
}
