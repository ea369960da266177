import AirlockArchive
import AirlockChild
#if canImport(Glibc)
import Glibc
#endif

exit(DecoderChild.main(Array(CommandLine.arguments.dropFirst())))
