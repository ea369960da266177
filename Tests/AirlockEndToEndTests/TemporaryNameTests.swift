import AirlockTestSupport
import Foundation
import Testing

@Suite("Temporary names: watch.ignore, WinSCP's .filepart, matched regardless of case")
struct TemporaryNameTests {
    @Test("the default patterns leave uploads in progress alone, whatever their case", arguments: [
        "photos.zip.filepart", "photos.zip.PART", "photos.zip.Part", "photos.zip.TMP", ".photos.zip", "photos.zip~", "PHOTOS.ZIP.FILEPART",
    ])
    func defaults(_ name: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: name)
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        expect(result.events.isEmpty, "\(name) was processed: \(result.stdout)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), [name])
        try expect(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).isEmpty)
        try sandbox.expectInvariants()
    }

    @Test("a configured list replaces the defaults")
    func configured() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["ignore": ["*.uploading"]])
        try sandbox.drop(Samples.validZip, as: "a.zip.UPLOADING")
        try sandbox.drop(Samples.validZip, as: "b.zip.part")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.count, 1)
        expectEqual(result.events.first?.drop, "b.zip.part")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), ["a.zip.UPLOADING"])
        try expect(sandbox.listing(sandbox.claimed).isEmpty && sandbox.listing(sandbox.staging).isEmpty)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, 1)
    }

    @Test("a pattern with a slash, an empty one or too many are configuration errors naming watch.ignore", arguments: [
        ["a/b"], [""], Array(repeating: "*.x", count: 65),
    ])
    func refused(_ patterns: [String]) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["ignore": patterns])
        let result = try sandbox.runOnce()
        expectEqual(result.status, 78)
        expect(result.stderr.contains("watch.ignore"), "\(result.stderr)")
    }
}
