import AirlockConfiguration
import AirlockJournal
import AirlockPolicy
import AirlockQuarantine

/// What the command line asked for, parsed before anything runs.
enum Command: Equatable {
    enum RootChoice: Equatable {
        case root(String)
        case config(String)
        /// Neither given: `./var` in a build tree, so `make run` needs nothing else;
        /// the system configuration when installed (see Installation).
        case implicit
    }

    case initialise(RootChoice)
    /// `instance`: `--instance NAME`, this run's name in a fleet sharing the root.
    case run(RootChoice, once: Bool, instance: String?)
    case checkPath([String])
    case inspect(file: String, RootChoice)
    case doctor(RootChoice, json: Bool)
    case quarantineList(RootChoice, QuarantineQuery, json: Bool)
    case quarantineShow(RootChoice, id: String, json: Bool)
    case quarantineRelease(RootChoice, id: String, reason: String?)
    case quarantineContents(RootChoice, id: String, json: Bool)
    /// Rebuilds state/quarantine.index from every report.
    case quarantineReindex(RootChoice)
    case quarantinePurge(RootChoice, ids: [String], olderThanSeconds: Int64?, dryRun: Bool, reason: String?)
    case history(RootChoice, HistoryQuery, json: Bool)
    case status(RootChoice, json: Bool)
    /// A command's usage, or the list of commands (nil).
    case help(String?)
    case outboxSweep(RootChoice)
    case events(RootChoice, follow: Bool, after: String?)
    case publish(RootChoice)
    case version

    struct UsageError: Error, CustomStringConvertible {
        let description: String
        init(_ message: String) { description = message }
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let verb = arguments.first else { throw UsageError("no command given") }
        if let topic = try Help.requested(arguments) { return .help(topic) }
        var options = Options(Array(arguments.dropFirst()))
        switch verb {
        case "init":
            return try parseInit(&options)
        case "run":
            let once = options.flag("--once")
            let instance = try options.value("--instance")
            if let instance, let problem = ClusterSettings.problem(with: instance) {
                throw UsageError("--instance: '\(instance)' \(problem)")
            }
            let choice = try options.rootChoice()
            try options.expectNoOperands(verb)
            return .run(choice, once: once, instance: instance)
        case "check-path":
            let names = try options.operands(allowingOptions: false)
            guard !names.isEmpty else { throw UsageError("check-path needs at least one NAME") }
            return .checkPath(names)
        case "inspect":
            let choice = try options.rootChoice()
            let files = try options.operands(allowingOptions: true)
            guard files.count == 1 else { throw UsageError("inspect takes exactly one FILE") }
            return .inspect(file: files[0], choice)
        case "doctor":
            let json = options.flag("--json")
            let choice = try options.rootChoice()
            try options.expectNoOperands(verb)
            return .doctor(choice, json: json)
        case "version", "--version":
            return .version
        case "quarantine":
            return try parseQuarantine(&options)
        case "history":
            return try parseHistory(&options)
        case "status":
            let json = options.flag("--json")
            let choice = try options.rootChoice()
            try options.expectNoOperands(verb)
            return .status(choice, json: json)
        case "events":
            return try parseEvents(&options)
        case "publish":
            let choice = try options.rootChoice()
            try options.expectNoOperands(verb)
            return .publish(choice)
        case "outbox":
            let choice = try options.rootChoice()
            guard try options.operands(allowingOptions: false) == ["sweep"] else { throw UsageError("outbox takes exactly: sweep") }
            return .outboxSweep(choice)
        default:
            throw UsageError("unknown command '\(verb)'")
        }
    }

    private static func parseInit(_ options: inout Options) throws(UsageError) -> Command {
        let choice = try options.rootChoice()
        try options.expectNoOperands("init")
        return .initialise(choice)
    }

    private static func parseHistory(_ options: inout Options) throws(UsageError) -> Command {
        let json = options.flag("--json")
        let perHour = options.flag("--per-hour")
        var query = HistoryQuery(id: try options.value("--id"), perHour: perHour)
        query.sinceSeconds = try options.value("--since").map { (text) throws(UsageError) in try duration(text, "--since") }
        query.limit = try options.value("--limit").map { (text) throws(UsageError) in try count(text, "--limit") }
        let choice = try options.rootChoice()
        try options.expectNoOperands("history")
        if perHour && (query.id != nil || query.limit != nil) { throw UsageError("history --per-hour does not take --id or --limit") }
        return .history(choice, query, json: json)
    }

    /// A whole number from 0 to 10,000,000.
    private static func count(_ text: String, _ flag: String) throws(UsageError) -> Int {
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text.utf8.count <= 8, let value = Int(text) else {
            throw UsageError("\(flag): '\(text)' is not a whole number up to 10000000")
        }
        return value
    }

    private static func parseEvents(_ options: inout Options) throws(UsageError) -> Command {
        let follow = options.flag("--follow")
        let after = try options.value("--after")
        let choice = try options.rootChoice()
        try options.expectNoOperands("events")
        if let after, EventFeed.Cursor(after) == nil { throw UsageError("--after: '\(after)' is not a cursor (they look like 1234:1:5678, INODE:GENERATION:OFFSET, as each event's \"cursor\" gives it)") }
        return .events(choice, follow: follow, after: after)
    }

    private static func parseQuarantine(_ options: inout Options) throws(UsageError) -> Command {
        let json = options.flag("--json")
        let dryRun = options.flag("--dry-run")
        let reason = try options.value("--reason")
        let uploader = try options.value("--uploader")
        let text = try options.value("--text")
        let offset = try options.value("--offset").map { (value) throws(UsageError) in try count(value, "--offset") }
        let limit = try options.value("--limit").map { (value) throws(UsageError) in try count(value, "--limit") }
        let listOnly = uploader != nil || text != nil || offset != nil || limit != nil
        let since = try options.value("--since").map { (text) throws(UsageError) in try duration(text, "--since") }
        let olderThan = try options.value("--older-than").map { (text) throws(UsageError) in try duration(text, "--older-than") }
        let choice = try options.rootChoice()
        let words = try options.operands(allowingOptions: false)
        guard let action = words.first else { throw UsageError("quarantine needs list, show, contents, release or purge") }
        let rest = Array(words.dropFirst())
        func forbid(_ present: Bool, _ flag: String) throws(UsageError) {
            if present { throw UsageError("quarantine \(action) does not take \(flag)") }
        }
        switch action {
        case "list":
            try forbid(dryRun, "--dry-run")
            try forbid(olderThan != nil, "--older-than")
            guard rest.isEmpty else { throw UsageError("quarantine list: unexpected argument '\(rest[0])'") }
            if let reason, Reason(rawValue: reason) == nil { throw UsageError("--reason: unknown reason code '\(reason)'") }
            return .quarantineList(choice, QuarantineQuery(reason: reason, uploader: uploader, sinceSeconds: since, text: text,
                                                           offset: offset ?? 0, limit: limit), json: json)
        case "show":
            try forbid(dryRun || reason != nil || since != nil || olderThan != nil || listOnly, "list options")
            guard rest.count == 1 else { throw UsageError("quarantine show takes exactly one ID") }
            return .quarantineShow(choice, id: rest[0], json: json)
        case "contents":
            try forbid(dryRun || reason != nil || since != nil || olderThan != nil || listOnly, "options other than --json")
            guard rest.count == 1 else { throw UsageError("quarantine contents takes exactly one ID") }
            return .quarantineContents(choice, id: rest[0], json: json)
        case "reindex":
            try forbid(json || dryRun || reason != nil || since != nil || olderThan != nil || listOnly || !rest.isEmpty, "arguments")
            return .quarantineReindex(choice)
        case "release":
            // --reason is the operator's own words for the journal here too.
            try forbid(json || dryRun || since != nil || olderThan != nil || listOnly, "options other than --reason")
            guard rest.count == 1 else { throw UsageError("quarantine release takes exactly one ID") }
            return .quarantineRelease(choice, id: rest[0], reason: reason)
        case "purge":
            // Here --reason is the operator's own words for the journal, not a reason code.
            try forbid(json || since != nil || listOnly, "list options")
            switch (rest.isEmpty, olderThan) {
            case (false, nil): return .quarantinePurge(choice, ids: rest, olderThanSeconds: nil, dryRun: dryRun, reason: reason)
            case (true, let seconds?): return .quarantinePurge(choice, ids: [], olderThanSeconds: seconds, dryRun: dryRun, reason: reason)
            default: throw UsageError("quarantine purge takes IDs or --older-than DURATION")
            }
        default:
            throw UsageError("unknown quarantine action '\(action)'")
        }
    }

    private static func duration(_ text: String, _ flag: String) throws(UsageError) -> Int64 {
        guard let seconds = DurationText.seconds(text) else {
            throw UsageError("\(flag): '\(text)' is not a duration of at most \(DurationText.maxText) (like 30s, 15m, 12h, 7d, 2w)")
        }
        return seconds
    }

    /// Options may stand anywhere after the command; `--` ends them.
    private struct Options {
        var items: [String]
        init(_ items: [String]) { self.items = items }

        mutating func flag(_ name: String) -> Bool {
            let end = items.firstIndex(of: "--") ?? items.endIndex
            guard let index = items[..<end].firstIndex(of: name) else { return false }
            items.remove(at: index)
            return true
        }

        mutating func value(_ name: String) throws(UsageError) -> String? {
            let end = items.firstIndex(of: "--") ?? items.endIndex
            var found: String?
            var index = items.startIndex
            var limit = end
            while index < limit {
                let item = items[index]
                if item == name {
                    guard index + 1 < limit else { throw UsageError("\(name) needs a value") }
                    guard found == nil else { throw UsageError("\(name) given twice") }
                    found = items[index + 1]
                    items.removeSubrange(index...(index + 1))
                    limit -= 2
                } else if item.hasPrefix(name + "=") {
                    guard found == nil else { throw UsageError("\(name) given twice") }
                    found = String(item.dropFirst(name.count + 1))
                    items.remove(at: index)
                    limit -= 1
                } else {
                    index += 1
                }
            }
            if let found, found.isEmpty { throw UsageError("\(name) needs a non-empty value") }
            return found
        }

        mutating func rootChoice() throws(UsageError) -> RootChoice {
            let root = try value("--root")
            let config = try value("--config")
            switch (root, config) {
            case (let root?, nil): return .root(root)
            case (nil, let config?): return .config(config)
            case (nil, nil): return .implicit
            default: throw UsageError("give --root or --config, not both")
            }
        }

        /// The remaining words; an unknown option is an error unless after `--`.
        mutating func operands(allowingOptions: Bool) throws(UsageError) -> [String] {
            var result: [String] = []
            var afterSeparator = false
            for item in items {
                if !afterSeparator && item == "--" { afterSeparator = true; continue }
                if !afterSeparator && item.hasPrefix("-") && item.count > 1 {
                    throw UsageError("unknown option '\(item)'")
                }
                result.append(item)
            }
            items.removeAll()
            return result
        }

        mutating func expectNoOperands(_ verb: String) throws(UsageError) {
            let rest = try operands(allowingOptions: false)
            if let first = rest.first { throw UsageError("\(verb): unexpected argument '\(first)'") }
        }
    }
}
