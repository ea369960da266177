@testable import AirlockConfiguration
import AirlockEvents
import AirlockSystem
import Foundation
import Testing

@Suite("Receipts: the directories walked to write or expire receipts are closed on every way out")
struct ReceiptDescriptorTests {
    /// What this process holds open beneath `path`, by /proc/self/fd: exact,
    /// since no other test opens anything beneath this test's own directory.
    private func descriptorsOpen(beneath path: String) -> [String] {
        let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return numbers.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0 == path || $0.hasPrefix(path + "/") }
    }

    /// A root of this test's own, by its canonical path; removed afterwards.
    private final class PrivateRoot {
        let path: String
        let descriptor: OwnedDescriptor

        init() throws {
            let made = try #require(mkdtemp(strdup(NSTemporaryDirectory() + "/airlock-receipts.XXXXXX")))
            defer { free(made) }
            path = URL(fileURLWithPath: String(cString: made)).resolvingSymlinksInPath().path
            descriptor = OwnedDescriptor(try FileDescriptor.openDirectory(path: path))
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test("a directory made, found or refused by openOrMake is open only while its owner lives")
    func openOrMakeCloses() throws {
        let root = try PrivateRoot()
        let name = Array("receipts".utf8)
        do {
            let made = try Receipts.openOrMake(root.descriptor.descriptor, name, mode: 0o711)
            #expect(try made.descriptor.status().permissions == 0o711)
            #expect(descriptorsOpen(beneath: root.path).sorted() == [root.path, root.path + "/receipts"])
        }
        do {
            let found = try Receipts.openOrMake(root.descriptor.descriptor, name, mode: 0o711)
            #expect(try found.descriptor.status().kind == .directory)
        }
        #expect(descriptorsOpen(beneath: root.path) == [root.path])
        try Data("x".utf8).write(to: URL(fileURLWithPath: root.path + "/file"))
        #expect(throws: SystemError.self) { try Receipts.openOrMake(root.descriptor.descriptor, Array("file".utf8), mode: 0o711) }
        #expect(descriptorsOpen(beneath: root.path) == [root.path])
    }

    @Test("expire removes old receipts and holds nothing open after, with receipts or without, or when a uid's directory is not one")
    func expireCloses() throws {
        let root = try PrivateRoot()
        let receipts = Receipts(root: root.descriptor.descriptor, settings: ReceiptSettings(), log: Log())
        #expect(try receipts.expire(olderThan: Int64.max) == 0)
        try FileManager.default.createDirectory(atPath: root.path + "/receipts/1000", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.path + "/receipts/1001", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root.path + "/receipts/1000/a.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root.path + "/receipts/1001/b.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root.path + "/receipts/1002"))
        #expect(try receipts.expire(olderThan: 0) == 0)
        #expect(try receipts.expire(olderThan: Int64.max) == 2)
        #expect(descriptorsOpen(beneath: root.path) == [root.path])
        #expect(FileManager.default.fileExists(atPath: root.path + "/receipts/1000"))
    }
}
