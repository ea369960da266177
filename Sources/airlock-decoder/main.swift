import AirlockArchive
import AirlockChild
import AirlockSystem

// The decoder writes its verdict, progress lines and listings with write(2) and
// holds nothing in stdio buffers, so it leaves without exit(3)'s cleanup: the
// destructors of the libraries it links (libarchive's codecs, libmagic's,
// libstdc++'s streams, …) would only free what the kernel frees anyway, and in
// a child forked from a template each would first fault in pages the decode
// never touched. Its writing thread, if any, is done by then: the scan closes
// its sink before the verdict is written.
CurrentProcess.exitWithoutCleanup(ArchiveDecoderProgram.main(Array(CommandLine.arguments.dropFirst())))
