@testable import AirlockConfiguration
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("ConfigurationSource: the directory it holds closes with its last copy, read or refused")
struct ConfigurationSourceDescriptorTests {
    @Test("a source holds its directory while a copy lives; a read file and the directory are closed after")
    func readThenDropped() throws {
        let scratch = try Scratch("source")
        try Data("{\"root\": \"var\"}".utf8).write(to: URL(fileURLWithPath: scratch.path + "/airlock.json"))
        do {
            let source = try ConfigurationSource.locate(scratch.path + "/airlock.json")
            let copy = source
            expectEqual(descriptorsOpen(beneath: scratch.path), [scratch.path])
            try expectEqual(source.read().root, "var")
            expectEqual(descriptorsOpen(beneath: scratch.path), [scratch.path])
            withExtendedLifetime(source) {}
            try expectEqual(copy.read().root, "var")
        }
        expect(descriptorsOpen(beneath: scratch.path).isEmpty)
        try expectEqual(Configuration.load(path: scratch.path + "/airlock.json").root, "var")
        expect(descriptorsOpen(beneath: scratch.path).isEmpty)
    }

    @Test("a link, a directory or a missing file: refused, nothing left open")
    func refusals() throws {
        let scratch = try Scratch("source")
        try Data("{}".utf8).write(to: URL(fileURLWithPath: scratch.path + "/real.json"))
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/airlock.json", withDestinationPath: "real.json")
        try FileManager.default.createDirectory(atPath: scratch.path + "/folder.json", withIntermediateDirectories: false)
        for name in ["airlock.json", "folder.json", "missing.json"] {
            #expect(throws: ConfigurationError.self) { try Configuration.load(path: scratch.path + "/" + name) }
            expect(descriptorsOpen(beneath: scratch.path).isEmpty, "\(name)")
        }
        #expect(throws: ConfigurationError.self) { try Configuration.load(path: scratch.path + "/gone/airlock.json") }
        expect(descriptorsOpen(beneath: scratch.path).isEmpty)
    }
}
