import AirlockConfiguration
import AirlockQuarantine
import AirlockRoot
import AirlockSystem

/// Who may use the quarantine commands (see Analyst): an analyst who came
/// through sudo works only on the root given by `--root` (the shipped sudo rule
/// pins it to the system root), and only as their groups allow.
extension CommandRunner {
    enum DeskRight {
        case view
        case review
    }

    /// Opens the root as `withRoot` does, after checking that the person behind
    /// this process has `right`; 77 (EX_NOPERM) with a clear message when not.
    static func withDesk(_ choice: Command.RootChoice, _ right: DeskRight,
                         _ body: (RootLayout, Configuration, Analyst) -> Int32) -> Int32 {
        // Only --root names a root without reading a configuration; otherwise the
        // owner is unknown, which holds a person who came through sudo to their
        // groups (and such a person is refused anything but --root below).
        var owner: UInt32?
        if case .root(let path) = choice { owner = (try? FileStatus(path: path))?.owner }
        let analyst = Analyst.current(rootOwner: owner)
        if right == .review && !analyst.mayReview {
            log.error(analyst.reviewRefusal)
            return ExitStatus.noPermission
        }
        if analyst.throughSudo {
            guard case .root = choice else {
                log.error("run through sudo for \(analyst.name), airlock works only on the root named by --root; --config and the implicit root are refused")
                return ExitStatus.noPermission
            }
            guard analyst.mayView else {
                log.error(analyst.viewRefusal)
                return ExitStatus.noPermission
            }
        }
        return withRoot(choice) { layout, configuration in body(layout, configuration, analyst) }
    }
}
