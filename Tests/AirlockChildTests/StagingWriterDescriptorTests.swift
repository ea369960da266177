import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("StagingWriter: directories kept open by its descent, all closed by close(), on every way out")
struct StagingWriterDescriptorTests {
    private let policy = Policy()

    private func entry(_ path: String) throws -> EntryPath {
        try EntryPath(validating: Array(path.utf8), policy: policy)
    }

    private func writeFile(_ writer: inout StagingWriter, _ path: String, _ text: String) throws {
        try writer.beginFile(entry(path))
        let bytes = Array(text.utf8)
        try bytes.withUnsafeBytes { buffer in try writer.write(buffer) }
        try writer.endFile()
    }

    @Test("entries over several directories land private (0700, 0600); close() leaves nothing open")
    func writesAndCloses() throws {
        let staging = try Scratch("writer")
        let root = OwnedDescriptor(try FileDescriptor.openDirectory(path: staging.path))
        var writer = StagingWriter(root: root.descriptor, policy: policy)
        try writer.makeDirectory(entry("a/b/"))
        try writeFile(&writer, "a/b/one.txt", "one")
        try writeFile(&writer, "a/c/two.txt", "two")
        try writeFile(&writer, "top.txt", "top")
        // The root, and a, a/b, a/c kept open between entries.
        expectEqual(descriptorsOpen(beneath: staging.path).count, 4)
        writer.close()
        expectEqual(descriptorsOpen(beneath: staging.path), [staging.path])
        expect(writer.filesWritten == 3 && writer.directoriesMade == 3)
        try expectEqual(String(contentsOfFile: staging.path + "/a/c/two.txt", encoding: .utf8), "two")
        let modes = try ["a", "a/b", "a/b/one.txt"].map {
            try #require(FileManager.default.attributesOfItem(atPath: staging.path + "/" + $0)[.posixPermissions] as? Int)
        }
        expectEqual(modes, [0o700, 0o700, 0o600])
    }

    @Test("a file that exists already, or a file where a directory must go, fails and leaks nothing")
    func failuresClose() throws {
        let staging = try Scratch("writer")
        let root = OwnedDescriptor(try FileDescriptor.openDirectory(path: staging.path))
        var writer = StagingWriter(root: root.descriptor, policy: policy)
        try writeFile(&writer, "d/same.txt", "first")
        #expect(throws: SystemError.self) { try writer.beginFile(entry("d/same.txt")) }
        #expect(throws: SystemError.self) { try writer.beginFile(entry("d/same.txt/under.txt")) }
        // A file left open by a scan that stops mid-entry is closed too.
        try writer.beginFile(entry("d/open.txt"))
        expect(descriptorsOpen(beneath: staging.path).contains(staging.path + "/d/open.txt"))
        writer.close()
        expectEqual(descriptorsOpen(beneath: staging.path), [staging.path])
        try expectEqual(String(contentsOfFile: staging.path + "/d/same.txt", encoding: .utf8), "first")
    }

    @Test("more directories than it keeps open: it starts again from the root, never holding more than its bound")
    func boundedOpen() throws {
        let staging = try Scratch("writer")
        let root = OwnedDescriptor(try FileDescriptor.openDirectory(path: staging.path))
        var writer = StagingWriter(root: root.descriptor, policy: policy)
        var most = 0
        for index in 0..<40 {
            try writeFile(&writer, "d\(index)/e/f.txt", "\(index)")
            most = max(most, descriptorsOpen(beneath: staging.path).count)
        }
        // The root plus at most 24 directories.
        expect(most <= 25 && most > 2)
        writer.close()
        expectEqual(descriptorsOpen(beneath: staging.path), [staging.path])
        expect(writer.filesWritten == 40 && writer.directoriesMade == 80)
        try expectEqual(String(contentsOfFile: staging.path + "/d39/e/f.txt", encoding: .utf8), "39")
    }
}
