import AirlockArchive
import AirlockChild
import AirlockSystem

CurrentProcess.exit(DecoderChild.main(Array(CommandLine.arguments.dropFirst())))
