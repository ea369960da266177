import AirlockKeyed
import AirlockSystem

CurrentProcess.exit(KeyedChild.main(Array(CommandLine.arguments.dropFirst())))
