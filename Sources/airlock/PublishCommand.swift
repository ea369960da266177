import AirlockConfiguration
import AirlockDecoders
import AirlockSystem

extension CommandRunner {
    /// `publish`: checks the root and its publish.nats section, then becomes
    /// airlock-publisher, found beside this program or in ../libexec/airlock/ the
    /// way the decoders are, never on PATH. The intake program itself links no
    /// network library.
    static func publish(_ choice: Command.RootChoice) -> Int32 {
        let root: String, configuration: Configuration
        switch checkedRoot(choice) {
        case .failed(let status): return status
        case .checked(let path, let checked): (root, configuration) = (path, checked)
        }
        guard configuration.publish != nil else {
            log.error("the configuration has no publish.nats section: nothing to publish (see airlock.json(5))")
            return ExitStatus.configuration
        }
        guard let directory = DecoderLocation.directory(), PathQueries.isExecutable(directory + "/airlock-publisher") else {
            log.error("airlock-publisher must be installed beside airlock or in ../libexec/airlock/ from it; it publishes to NATS")
            return ExitStatus.unavailable
        }
        var arguments = ["airlock-publisher", "--root", root]
        if case .config(let file) = choice { arguments += ["--config", file] }
        let error = CurrentProcess.replace(with: directory + "/airlock-publisher", arguments: arguments)
        log.error("cannot run airlock-publisher: \(error)")
        return ExitStatus.unavailable
    }

    enum CheckedRoot {
        case checked(root: String, configuration: Configuration)
        case failed(Int32)
    }

    /// The root `choice` names and its configuration, checked by opening it as
    /// `withRoot` does; its directories are closed again when this returns, before
    /// this process becomes airlock-publisher.
    private static func checkedRoot(_ choice: Command.RootChoice) -> CheckedRoot {
        switch openRoot(choice) {
        case .failed(let status): return .failed(status)
        case .opened(let root, let configuration, _): return .checked(root: root, configuration: configuration)
        }
    }
}
