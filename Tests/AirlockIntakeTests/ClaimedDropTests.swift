@testable import AirlockConfiguration
@testable import AirlockEvents
@testable import AirlockIntake
@testable import AirlockRoot
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A drop is judged as it was when it was claimed: a write that lands between the
/// claim's rename and the supervisor opening the drop is a change, not part of the
/// archive.
@Suite("Claim: a drop written to after it was claimed is changed-during-ingest")
struct ClaimedDropTests {
    /// A fresh root, initialised and opened; removed afterwards.
    final class Root {
        /// Holds the root's parent directory, removed when the root goes.
        private let scratch: Scratch
        let path: String
        let layout: RootLayout

        init() throws {
            scratch = try Scratch("claim")
            path = scratch.path + "/root"
            _ = try RootLayout.initialise(path: path)
            layout = try RootLayout.open(path: path)
        }

        func entries(_ directory: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: path + "/" + directory).sorted()
        }
    }

    /// Where `airlock-decoder` was built, beside the test bundle.
    static var decoderDirectory: String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 where !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("airlock-decoder").path) {
            directory = directory.deletingLastPathComponent()
        }
        return directory.path
    }

    /// A plain ZIP of five stored files from the fixture corpus, with the name its
    /// outbox entry takes.
    static func plainZip() throws -> [UInt8] {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return Array(try Data(contentsOf: repository.appendingPathComponent("fixtures/archives/zip-stored-valid.zip")))
    }

    @Test("bytes appended between the claim and the decoder are changed-during-ingest, kept whole in quarantine")
    func appendedAfterClaim() throws {
        let root = try Root()
        let zip = try Self.plainZip()
        let late = Array("appended by a late writer".utf8)
        try Data(zip).write(to: URL(fileURLWithPath: root.path + "/inbox/late.zip"))
        let intake = Intake(layout: root.layout, configuration: Configuration(), decoderDirectory: Self.decoderDirectory, log: Log())
        let inbox = try #require(try root.layout.openInbox())
        defer { inbox.close() }
        let ticket = try #require(try intake.claim(Array("late.zip".utf8), from: inbox))
        // The claim has happened; the producer was not finished.
        let drop = URL(fileURLWithPath: root.path + "/state/claimed/\(ticket.id)/drop")
        let handle = try FileHandle(forWritingTo: drop)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(late))
        try handle.close()
        let outcome = intake.process(ticket)
        guard case .rejected(let rejection) = outcome.verdict else {
            Issue.record("expected a rejection, got \(outcome.verdict)")
            return
        }
        expectEqual(rejection.reason, .changedDuringIngest, "\(rejection)")
        try expectEqual(root.entries("outbox"), [])
        try expectEqual(root.entries("state/claimed"), [])
        try expectEqual(root.entries("state/staging"), [])
        try expectEqual(Data(contentsOf: URL(fileURLWithPath: root.path + "/quarantine/\(ticket.id)/drop")), Data(zip + late))
    }

    @Test("a drop left alone after its claim is decoded and accepted")
    func unchangedAfterClaim() throws {
        let root = try Root()
        let zip = try Self.plainZip()
        try Data(zip).write(to: URL(fileURLWithPath: root.path + "/inbox/calm.zip"))
        let intake = Intake(layout: root.layout, configuration: Configuration(), decoderDirectory: Self.decoderDirectory, log: Log())
        let inbox = try #require(try root.layout.openInbox())
        defer { inbox.close() }
        let ticket = try #require(try intake.claim(Array("calm.zip".utf8), from: inbox))
        expect(ticket.claimedAs != nil, "the claim read the drop before its rename")
        let outcome = intake.process(ticket)
        guard case .accepted = outcome.verdict else {
            Issue.record("expected the drop accepted, got \(outcome.verdict)")
            return
        }
        try expectEqual(root.entries("outbox"), ["calm"])
        try expectEqual(root.entries("quarantine"), [])
    }
}
