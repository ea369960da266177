@testable import AirlockJournal
import AirlockConfiguration
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("EventFeed: what a feed opens closes with its last copy, read or refused")
struct EventFeedDescriptorTests {
    /// A root with `state/` and a journal of two records, by its canonical path; removed afterwards.
    private final class FeedRoot {
        let scratch: Scratch
        var path: String { scratch.path }

        init(fleet: Bool) throws {
            scratch = try Scratch("feed")
            try FileManager.default.createDirectory(atPath: path + "/state", withIntermediateDirectories: false)
            let state = OwnedDescriptor(try FileDescriptor.openDirectory(path: path + "/state"))
            let journal = Journal(state: state.descriptor, maxBytes: 1 << 20, keep: 2)
            for number in 0..<2 {
                try journal.append(.claimed(.init(drop: .init(id: "20261130T000000Z-\(number)", drop: "x.zip"))))
            }
            if fleet {
                try FileManager.default.createDirectory(atPath: path + "/state/journal", withIntermediateDirectories: false)
            }
        }
    }

    @Test("a feed opened on a root holds state/ while a copy lives; reading holds nothing more after; then none",
          arguments: [false, true])
    func openedReadDropped(fleet: Bool) throws {
        let root = try FeedRoot(fleet: fleet)
        do {
            let feed = try EventFeed.open(root: root.path, configuration: Configuration())
            let copy = feed
            expectEqual(descriptorsOpen(beneath: root.path), [root.path + "/state"])
            withExtendedLifetime(feed) {}
            try expectEqual(copy.read(after: nil).lines.count, 2)
            expectEqual(descriptorsOpen(beneath: root.path), [root.path + "/state"])
        }
        expect(descriptorsOpen(beneath: root.path).isEmpty)
    }

    @Test("a cursor into a file that is not kept: refused, nothing more left open")
    func expiredCursor() throws {
        let root = try FeedRoot(fleet: false)
        do {
            let feed = try EventFeed.open(root: root.path, configuration: Configuration())
            let stale = try #require(EventFeed.Cursor("1:1:0"))
            #expect(throws: EventFeed.Expired.self) { try feed.read(after: stale) }
            expectEqual(descriptorsOpen(beneath: root.path), [root.path + "/state"])
        }
        expect(descriptorsOpen(beneath: root.path).isEmpty)
    }

    @Test("a root without state/: refused, nothing left open")
    func noState() throws {
        let root = try FeedRoot(fleet: false)
        try FileManager.default.removeItem(atPath: root.path + "/state")
        #expect(throws: SystemError.self) { try EventFeed.open(root: root.path, configuration: Configuration()) }
        expect(descriptorsOpen(beneath: root.path).isEmpty)
    }
}
