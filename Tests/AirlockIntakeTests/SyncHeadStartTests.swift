@testable import AirlockIntake
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Testing

@Suite("SyncHeadStart: a syncfs ahead of the commit for a drop of much data or many files, and none for a small drop")
struct SyncHeadStartTests {
    @Test("the decoder's exit after many small files (1,000 files, 4.5 MB) starts one call")
    func manyFiles() throws {
        try expectEqual(Self.calls(after: [(4_566_713, 1000)]), 1)
    }

    @Test("a drop of a few small files (the flood's) starts none; 8 MiB in one file starts one")
    func fewFilesOrMuchData() throws {
        try expectEqual(Self.calls(after: [(4311, 5), (SyncHeadStart.minimumBytes - 1, SyncHeadStart.minimumFiles - 1)]), 0)
        try expectEqual(Self.calls(after: [(SyncHeadStart.minimumBytes, 1)]), 1)
    }

    @Test("the exit says whether it asked for a call: then the audit starts no writeback of its own")
    func exitSaysWhetherItSyncs() throws {
        let scratch = try Scratch("head-start")
        let directory = try FileDescriptor.openDirectory(path: scratch.path)
        defer { directory.close() }
        let small = SyncHeadStart(directory, limit: Policy().maxTotalBytes)
        expect(!small.decoderExited(wroteAtLeast: 4311, files: 5))
        small.close()
        expectEqual(small.calls, 0)
        let large = SyncHeadStart(directory, limit: Policy().maxTotalBytes)
        expect(large.decoderExited(wroteAtLeast: SyncHeadStart.minimumBytes, files: 1))
        large.close()
        expectEqual(large.calls, 1)
    }

    @Test("the child's writing notices ask for a call once 8 MiB are said written; one step alone asks for none")
    func writingNotices() throws {
        try expectEqual(Self.calls(notices: [WritingNotice.step]), 0)
        try expectEqual(Self.calls(notices: [WritingNotice.step, WritingNotice.step]), 1)
    }

    @Test("a child saying it wrote more than the policy lets a drop write gets no call for the excess")
    func noticesBelievedUpToTheLimit() throws {
        try expectEqual(Self.calls(notices: [1 << 40], limit: SyncHeadStart.minimumBytes - 1), 0)
        try expectEqual(Self.calls(notices: [1 << 40, 1 << 40], limit: SyncHeadStart.minimumBytes), 1)
        try expectEqual(Self.calls(notices: [-(1 << 40), SyncHeadStart.minimumBytes - 1], limit: 1 << 30), 0)
    }

    /// The syncfs calls one head start made, believing at most `limit` bytes, for
    /// a child's writing notices of these byte counts, each call waited for
    /// before the next notice, so that none is merged with another.
    static func calls(notices: [Int64], limit: Int64 = Policy().maxTotalBytes) throws -> Int {
        let scratch = try Scratch("head-start")
        let directory = try FileDescriptor.openDirectory(path: scratch.path)
        defer { directory.close() }
        let headStart = SyncHeadStart(directory, limit: limit)
        for bytes in notices {
            headStart.written(bytes)
            headStart.waitUntilIdle()
        }
        headStart.close()
        return headStart.calls
    }

    /// The syncfs calls one head start made, on a scratch directory, for decoders
    /// that exited having written these bytes and files.
    static func calls(after exits: [(bytes: Int64, files: Int64)]) throws -> Int {
        let scratch = try Scratch("head-start")
        let directory = try FileDescriptor.openDirectory(path: scratch.path)
        defer { directory.close() }
        let headStart = SyncHeadStart(directory, limit: Policy().maxTotalBytes)
        for exit in exits { headStart.decoderExited(wroteAtLeast: exit.bytes, files: exit.files) }
        headStart.close()
        return headStart.calls
    }
}
