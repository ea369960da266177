import AirlockCore
#if canImport(Glibc)
import Glibc
#endif

// Parse into a Command, then dispatch; nothing else lives here.
// A closed standard output must not kill the intake halfway through a drop:
// writes then fail with EPIPE instead. Decoder children get default dispositions.
signal(SIGPIPE, SIG_IGN)
let status: Int32
do {
    let command = try Command.parse(Array(CommandLine.arguments.dropFirst()))
    status = Dispatch.run(command)
} catch {
    // One line that says what is wrong; the whole usage only when nothing was asked.
    if CommandLine.arguments.count > 1 {
        Log().error(error.description + " ('airlock help' shows the usage)")
    } else {
        Log().error(error.description)
        Log().plain(Command.usage)
    }
    status = ExitStatus.usage
}
exit(status)
