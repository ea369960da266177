import AirlockEvents
import AirlockSystem

// Parse into a Command, then dispatch; nothing else lives here.
// A closed standard output must not kill the intake halfway through a drop:
// writes then fail with EPIPE instead. Decoder children get default dispositions.
Signal.brokenPipe.ignore()
let status: Int32
do {
    let command = try Command.parse(Array(CommandLine.arguments.dropFirst()))
    status = CommandRunner.run(command)
} catch {
    // One line that says what is wrong and where the usage is, never the whole usage.
    let arguments = Array(CommandLine.arguments.dropFirst())
    Log().error(error.description + " (" + Help.pointer(for: arguments) + ")")
    status = ExitStatus.usage
}
CurrentProcess.exit(status)
