import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("Root: one walk, by descriptor and never through a link")
struct RootWalkTests {
    /// Records what a walk met, and descends into every directory.
    private struct Recorder: TreeVisitor {
        var visited: [String] = []
        var left: [String] = []

        mutating func visit(_ name: [UInt8], in directory: FileDescriptor, path: [UInt8]) throws -> Bool {
            visited.append(String(decoding: path, as: UTF8.self))
            return try directory.status(of: name).kind == .directory
        }

        mutating func leave(_ directory: FileDescriptor, named name: [UInt8], in parent: FileDescriptor, path: [UInt8],
                            entries: Int) throws {
            left.append("\(String(decoding: path, as: UTF8.self)):\(entries)")
        }
    }

    /// a/b/c.txt, a/empty/, top.txt and a link to / that must not be followed.
    private func tree(_ directory: Scratch) throws {
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory.path + "/a/b", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: directory.path + "/a/empty", withIntermediateDirectories: true)
        try Data("c".utf8).write(to: URL(fileURLWithPath: directory.path + "/a/b/c.txt"))
        try Data("t".utf8).write(to: URL(fileURLWithPath: directory.path + "/top.txt"))
        try manager.createSymbolicLink(atPath: directory.path + "/a/out", withDestinationPath: "/")
    }

    @Test("each entry is visited once with its path; a directory is left after everything beneath it, with its count")
    func walkOrder() throws {
        let directory = try Scratch("owned")
        try tree(directory)
        let top = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        var recorder = Recorder()
        let entries = try Root(top.descriptor).walk(depthLimit: 8, &recorder)
        expectEqual(entries, 2)
        expectEqual(recorder.visited.sorted(), ["a", "a/b", "a/b/c.txt", "a/empty", "a/out", "top.txt"])
        expect(recorder.left.firstIndex(of: "a/b:1")! < recorder.left.firstIndex(of: "a:3")!)
        expect(recorder.left.contains("a/empty:0"))
        // Only the top directory, which this test holds, is open once the walk is over.
        expect(descriptorsOpen(beneath: directory.path) == [directory.path] && top.descriptor.rawValue >= 0)
    }

    @Test("past its depth limit the walk fails with ELOOP under the caller's operation, closing what it opened")
    func depthLimit() throws {
        let directory = try Scratch("owned")
        try tree(directory)
        var recorder = Recorder()
        do {
            let top = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
            let error = #expect(throws: SystemError.self) { try Root(top.descriptor).walk(depthLimit: 1, operation: "audit", &recorder) }
            expect(error?.errno == .tooManyLinks && error?.operation == "audit")
        }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }

    @Test("a directory beneath is opened a component at a time; a link on the way is refused")
    func openBeneath() throws {
        let directory = try Scratch("owned")
        try tree(directory)
        let top = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        do {
            let b = try Root(top.descriptor).openDirectory([Array("a".utf8), Array("b".utf8)])
            expect(descriptorsOpen(beneath: directory.path) == [directory.path, directory.path + "/a/b"] && b.descriptor.rawValue >= 0)
        }
        #expect(throws: SystemError.self) { _ = try Root(top.descriptor).openDirectory([Array("a".utf8), Array("out".utf8)]) }
        expect(descriptorsOpen(beneath: directory.path) == [directory.path] && top.descriptor.rawValue >= 0)
    }

    @Test("removeTree empties bottom up without following the link, and closes all it opened")
    func removeTree() throws {
        let directory = try Scratch("owned")
        try tree(directory)
        let top = OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
        try top.descriptor.removeTree(Array("a".utf8))
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: directory.path), ["top.txt"])
        expect(FileManager.default.fileExists(atPath: "/etc"), "the link's target is untouched")
        try top.descriptor.removeTree(Array("missing".utf8))
        expect(descriptorsOpen(beneath: directory.path) == [directory.path] && top.descriptor.rawValue >= 0)
    }
}
