import AirlockConfiguration
import AirlockSystem
@testable import AirlockWatcher
import AirlockTestSupport
import Foundation
import Testing

@Suite("Completion by lease: the drop opened to try its lease is closed, whatever the answer")
struct CompletionDescriptorTests {
    @Test("ready, a writer still active, and vanished: only the inbox itself stays open")
    func leaseCheckCloses() throws {
        let scratch = try Scratch("completion")
        let path = scratch.path
        try Data("done".utf8).write(to: URL(fileURLWithPath: path + "/done.zip"))
        try Data("half".utf8).write(to: URL(fileURLWithPath: path + "/half.zip"))
        let inbox = OwnedDescriptor(try FileDescriptor.openDirectory(path: path))
        var check = CompletionCheck(rule: .lease, log: { _ in })
        var entry = InboxTracker.Entry(firstSeen: 0, due: 0, lastSeen: nil)
        expectEqual(check.check(Array("done.zip".utf8), in: inbox.descriptor, entry: &entry, isTemporary: { _ in false }), .ready)
        expectEqual(descriptorsOpen(beneath: path), [path])
        let writer = open(path + "/half.zip", O_WRONLY | O_CLOEXEC)
        expect(writer >= 0)
        expectEqual(check.check(Array("half.zip".utf8), in: inbox.descriptor, entry: &entry, isTemporary: { _ in false }), .writerActive)
        close(writer)
        expectEqual(descriptorsOpen(beneath: path), [path])
        expectEqual(check.check(Array("gone.zip".utf8), in: inbox.descriptor, entry: &entry, isTemporary: { _ in false }), .vanished)
        expectEqual(descriptorsOpen(beneath: path), [path])
    }
}
