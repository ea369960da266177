import AirlockDecoding
import AirlockSystem

CurrentProcess.exit(DecoderChild.main(Array(CommandLine.arguments.dropFirst())))
