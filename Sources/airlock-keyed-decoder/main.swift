import AirlockKeyed
import AirlockSystem

CurrentProcess.exit(KeyedDecoderProgram.main(Array(CommandLine.arguments.dropFirst())))
