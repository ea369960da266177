@testable import AirlockConfiguration
import AirlockEvents
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("Receipts: the directories walked to write or expire receipts are closed on every way out")
struct ReceiptDescriptorTests {
    /// A root of this test's own, by its canonical path; removed afterwards.
    private final class PrivateRoot {
        let scratch: Scratch
        let descriptor: OwnedDescriptor
        var path: String { scratch.path }

        init() throws {
            scratch = try Scratch("receipts")
            descriptor = OwnedDescriptor(try FileDescriptor.openDirectory(path: scratch.path))
        }
    }

    @Test("a directory made, found or refused by openOrMake is open only while its owner lives")
    func openOrMakeCloses() throws {
        let root = try PrivateRoot()
        let name = Array("receipts".utf8)
        do {
            let made = try Receipts.openOrMake(root.descriptor.descriptor, name, mode: 0o711)
            try expectEqual(made.descriptor.status().permissions, 0o711)
            expectEqual(descriptorsOpen(beneath: root.path), [root.path, root.path + "/receipts"])
        }
        do {
            let found = try Receipts.openOrMake(root.descriptor.descriptor, name, mode: 0o711)
            try expectEqual(found.descriptor.status().kind, .directory)
        }
        expectEqual(descriptorsOpen(beneath: root.path), [root.path])
        try Data("x".utf8).write(to: URL(fileURLWithPath: root.path + "/file"))
        #expect(throws: SystemError.self) { try Receipts.openOrMake(root.descriptor.descriptor, Array("file".utf8), mode: 0o711) }
        expectEqual(descriptorsOpen(beneath: root.path), [root.path])
    }

    @Test("expire removes old receipts and holds nothing open after, with receipts or without, or when a uid's directory is not one")
    func expireCloses() throws {
        let root = try PrivateRoot()
        let receipts = Receipts(root: root.descriptor.descriptor, settings: ReceiptSettings(), log: Log())
        try expectEqual(receipts.expire(olderThan: Int64.max), 0)
        try FileManager.default.createDirectory(atPath: root.path + "/receipts/1000", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.path + "/receipts/1001", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root.path + "/receipts/1000/a.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root.path + "/receipts/1001/b.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: root.path + "/receipts/1002"))
        try expectEqual(receipts.expire(olderThan: 0), 0)
        try expectEqual(receipts.expire(olderThan: Int64.max), 2)
        expectEqual(descriptorsOpen(beneath: root.path), [root.path])
        expect(FileManager.default.fileExists(atPath: root.path + "/receipts/1000"))
    }
}
