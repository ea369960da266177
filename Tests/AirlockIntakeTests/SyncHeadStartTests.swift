@testable import AirlockIntake
import AirlockSystem
import AirlockTestSupport
import Testing

@Suite("SyncHeadStart: a syncfs ahead of the commit for a drop of much data or many files, and none for a small drop")
struct SyncHeadStartTests {
    @Test("the decoder's exit after many small files (1,000 files, 4.5 MB) starts one call")
    func manyFiles() throws {
        let scratch = try Scratch("head-start")
        let directory = try FileDescriptor.openDirectory(path: scratch.path)
        defer { directory.close() }
        let headStart = SyncHeadStart(directory)
        headStart.decoderExited(wroteAtLeast: 4_566_713, files: 1000)
        headStart.close()
        #expect(headStart.calls == 1)
    }

    @Test("a drop of a few small files (the flood's) starts none; 8 MiB in one file starts one")
    func fewFilesOrMuchData() throws {
        let scratch = try Scratch("head-start")
        let directory = try FileDescriptor.openDirectory(path: scratch.path)
        defer { directory.close() }
        let few = SyncHeadStart(directory)
        few.decoderExited(wroteAtLeast: 4311, files: 5)
        few.decoderExited(wroteAtLeast: SyncHeadStart.minimumBytes - 1, files: SyncHeadStart.minimumFiles - 1)
        few.close()
        #expect(few.calls == 0)
        let large = SyncHeadStart(directory)
        large.decoderExited(wroteAtLeast: SyncHeadStart.minimumBytes, files: 1)
        large.close()
        #expect(large.calls == 1)
    }
}
