import AirlockArchive
import AirlockChild
import AirlockSystem

CurrentProcess.exit(ArchiveDecoderProgram.main(Array(CommandLine.arguments.dropFirst())))
