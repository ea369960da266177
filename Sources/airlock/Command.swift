/// What the command line asked for, parsed before anything runs.
enum Command: Equatable {
    enum RootChoice: Equatable {
        case root(String)
        case config(String)
        /// Neither given: `./var`, so `make run` needs nothing else.
        case implicit
    }

    case initialise(root: String)
    case run(RootChoice, once: Bool)
    case checkPath([String])
    case inspect(file: String, RootChoice)
    case doctor(RootChoice, json: Bool)
    case help
    case version

    struct UsageError: Error, CustomStringConvertible {
        let description: String
        init(_ message: String) { description = message }
    }

    static let usage = """
        usage: airlock init [--root DIR]
               airlock run [--root DIR | --config FILE] [--once]
               airlock check-path NAME...
               airlock inspect FILE [--root DIR | --config FILE]
               airlock doctor [--root DIR | --config FILE] [--json]
               airlock help | version
        Without --root or --config, the root is ./var.
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        guard let verb = arguments.first else { throw UsageError("no command given") }
        var options = Options(Array(arguments.dropFirst()))
        switch verb {
        case "init":
            let choice = try options.rootChoice()
            try options.expectNoOperands(verb)
            switch choice {
            case .root(let dir): return .initialise(root: dir)
            case .implicit: return .initialise(root: "var")
            case .config: throw UsageError("init takes --root DIR, not --config")
            }
        case "run":
            let once = options.flag("--once")
            let choice = try options.rootChoice()
            try options.expectNoOperands(verb)
            return .run(choice, once: once)
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
        case "help", "--help", "-h":
            return .help
        case "version", "--version":
            return .version
        case "quarantine", "status":
            throw UsageError("'\(verb)' is not available in this version yet")
        default:
            throw UsageError("unknown command '\(verb)'")
        }
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
