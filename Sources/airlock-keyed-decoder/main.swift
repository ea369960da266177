import AirlockKeyed
import AirlockSystem

// The child has written its verdict with write(2) and holds nothing in stdio
// buffers, so it leaves without exit(3)'s cleanup: the destructors of every
// library it links (libstdc++'s streams, Foundation's, libmagic's, …) would run
// only to free what the kernel frees anyway, and in a child forked from a
// template each of them first faults in pages of code and data the decode never
// touched (perf: about 40 of a keyed child's 230 page faults per drop).
CurrentProcess.exitWithoutCleanup(KeyedDecoderProgram.main(Array(CommandLine.arguments.dropFirst())))
