import AirlockEvents
@testable import AirlockIntake
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

/// A drop's staging directory is removed on every way its decision ends except
/// the commit, and its descriptor is closed on all of them.
@Suite("StagingDirectory: removed unless committed, closed on every way out")
struct StagingDirectoryTests {
    private struct Planned: Error {}

    /// state/staging stand-in: a directory of this test's own, by its canonical path; removed afterwards.
    final class Parent {
        let scratch: Scratch
        let descriptor: FileDescriptor
        var path: String { scratch.path }

        init() throws {
            scratch = try Scratch("staging")
            descriptor = try FileDescriptor.openDirectory(path: scratch.path)
        }

        deinit { descriptor.close() }

        var entries: [String] { (try? FileManager.default.contentsOfDirectory(atPath: path).sorted()) ?? [] }

        /// What this process holds open beneath the directory (by /proc/self/fd, its own descriptor aside).
        var openBeneath: [String] { descriptorsOpen(beneath: path).filter { $0 != path } }
    }

    /// A decoded tree inside `staging`: a file and a directory holding one.
    private func decodeInto(_ staging: borrowing StagingDirectory) throws {
        try staging.descriptor.makeDirectory(Array("sub".utf8), mode: 0o700)
        for name in ["a.txt", "sub/b.txt"] {
            let file = try staging.descriptor.open(Array(name.utf8), [.writeOnly, .create, .noFollow], mode: 0o600)
            try file.closeAfter { (fd) throws(SystemError) in try fd.writeAll(Array("decoded".utf8)) }
        }
    }

    @Test("made empty with mode 0700; an owner that ends without a verdict removes it and its tree")
    func removedWhenAbandoned() throws {
        let parent = try Parent()
        do {
            let staging = try StagingDirectory(in: parent.descriptor, Array("id1".utf8))
            try expectEqual(parent.descriptor.status(of: Array("id1".utf8)).permissions, 0o700)
            try decodeInto(staging)
            // The owner is used after the look, so it lives until then.
            expect(parent.entries == ["id1"] && staging.descriptor.rawValue >= 0)
        }
        expect(parent.entries.isEmpty)
        expect(parent.openBeneath.isEmpty)
    }

    @Test("a thrown error removes it too")
    func removedWhenThrown() throws {
        let parent = try Parent()
        func failing() throws {
            let staging = try StagingDirectory(in: parent.descriptor, Array("id2".utf8))
            try decodeInto(staging)
            throw Planned()
        }
        #expect(throws: Planned.self) { try failing() }
        expect(parent.entries.isEmpty)
        expect(parent.openBeneath.isEmpty)
    }

    @Test("a rejected or deferred verdict removes it", arguments: [
        DropOutcome.Verdict.rejected(Rejection(.decoderFailed, "planned")), .deferred(detail: "planned"),
    ])
    func removedForVerdict(_ verdict: DropOutcome.Verdict) throws {
        let parent = try Parent()
        let staging = try StagingDirectory(in: parent.descriptor, Array("id3".utf8))
        try decodeInto(staging)
        try staging.finish(verdict)
        expect(parent.entries.isEmpty)
        expect(parent.openBeneath.isEmpty)
    }

    @Test("an accepted verdict (the commit renamed it away) removes nothing and closes it")
    func keptWhenCommitted() throws {
        let parent = try Parent()
        try parent.descriptor.makeDirectory(Array("outbox".utf8), mode: 0o755)
        let staging = try StagingDirectory(in: parent.descriptor, Array("id4".utf8))
        try decodeInto(staging)
        try parent.descriptor.openDirectory(Array("outbox".utf8)).closeAfter { (outbox) throws(SystemError) in
            try parent.descriptor.renameNoReplace(Array("id4".utf8), to: outbox, Array("entry".utf8))
        }
        // Another drop's directory under the same name must survive this owner.
        try parent.descriptor.makeDirectory(Array("id4".utf8), mode: 0o700)
        try staging.finish(.accepted(output: Array("entry".utf8), files: 2, bytes: 14))
        expectEqual(parent.entries, ["id4", "outbox"])
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: parent.path + "/outbox/entry").sorted(), ["a.txt", "sub"])
        expect(parent.openBeneath.isEmpty)
    }

    @Test("a name already taken is refused, and the directory there is left alone")
    func existingName() throws {
        let parent = try Parent()
        try parent.descriptor.makeDirectory(Array("id5".utf8), mode: 0o700)
        #expect(throws: SystemError.self) { _ = try StagingDirectory(in: parent.descriptor, Array("id5".utf8)) }
        expectEqual(parent.entries, ["id5"])
    }
}
