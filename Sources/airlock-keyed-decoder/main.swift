import AirlockKeyed
#if canImport(Glibc)
import Glibc
#endif

exit(KeyedChild.main(Array(CommandLine.arguments.dropFirst())))
