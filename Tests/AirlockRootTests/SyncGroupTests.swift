import AirlockRoot
import AirlockSystem
import AirlockTestSupport
import Foundation
import Synchronization
import Testing

@Suite("Group commit: workers syncing at once share syncfs calls, and every call returns after a sync that began after it")
struct SyncGroupTests {
    @Test func concurrentCallsShareSyncs() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("airlock-syncgroup-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        expect(fd >= 0)
        defer { close(fd) }
        let group = SyncGroup()
        let threads = 8, each = 25
        let returned = Mutex(0)
        // Threads of their own: dispatch's pool may run the loops one after another
        // when other work holds its threads, and then nothing overlaps.
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread {
                for _ in 0..<each {
                    try? group.sync(FileDescriptor(rawValue: fd))
                    returned.withLock { $0 += 1 }
                }
                done.leave()
            }.start()
        }
        done.wait()
        expectEqual(returned.withLock { $0 }, threads * each)
        // Eight threads calling back to back overlap: some calls were covered by a peer's sync.
        expect(group.syncs >= 1 && group.syncs < UInt64(threads * each), "\(group.syncs) syncs")
    }
}
