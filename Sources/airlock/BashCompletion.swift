import AirlockPolicy

/// The bash completion script, generated from the command table and the reason
/// codes: the commands, each one's actions and options, a directory after
/// `--root`, a file after `--config` and the reason codes after `--reason`.
enum BashCompletion {
    static var script: String {
        let commands = Help.commands.map(\.name).joined(separator: " ")
        let valueOptions = Help.commands.flatMap(\.valueOptions).filter { !["--root", "--config", "--reason"].contains($0) }
        var lines = [
            "# bash completion for airlock(1), generated from its command table by `airlock help --completion`",
            "# (make docs): edit the table, not this file.",
            "_airlock() {",
            "    local cur prev words cword",
            "    _init_completion || return",
            "    local commands=\"\(commands)\"",
            "    if [[ $cword -eq 1 ]]; then",
            "        COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))",
            "        return",
            "    fi",
            "    case $prev in",
            "        --root) _filedir -d; return ;;",
            "        --config) _filedir json; return ;;",
            "        --reason)",
            "            COMPREPLY=($(compgen -W \"\(Reason.allCases.map(\.rawValue).joined(separator: " "))\" -- \"$cur\"))",
            "            return ;;",
            "        \(unique(valueOptions).joined(separator: "|"))) return ;;",
            "    esac",
            "    local options",
            "    case ${words[1]} in",
        ]
        for command in Help.commands {
            lines += branch(command)
        }
        lines += [
            "        *) return ;;",
            "    esac",
            "    COMPREPLY+=($(compgen -W \"$options\" -- \"$cur\"))",
            "}",
            "complete -F _airlock airlock",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The `case` branch of one command: its actions as the second word, a file
    /// or a command name where its operand is one, then its options.
    static func branch(_ command: CommandHelp) -> [String] {
        var lines = ["        \(command.name))"]
        if !command.actions.isEmpty {
            lines += ["            if [[ $cword -eq 2 ]]; then",
                      "                COMPREPLY=($(compgen -W \"\(command.actions.joined(separator: " "))\" -- \"$cur\"))",
                      "                return",
                      "            fi"]
        }
        let operands = command.options.map(\.0).filter { !$0.hasPrefix("-") }
        if operands.contains("FILE") { lines.append("            _filedir") }
        if command.synopsis.contains(where: { $0.contains("COMMAND") }) {
            lines.append("            [[ $cword -eq 2 ]] && COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))")
        }
        lines.append("            options=\"\(command.optionNames.joined(separator: " "))\" ;;")
        return lines
    }

    static func unique(_ words: [String]) -> [String] {
        var seen: [String] = []
        for word in words where !seen.contains(word) { seen.append(word) }
        return seen
    }
}
