@testable import AirlockConfiguration
import AirlockSystem
import Foundation
import Testing

@Suite("ConfigurationSource: the directory it holds closes with its last copy, read or refused")
struct ConfigurationSourceDescriptorTests {
    /// What this process holds open beneath `path`, by /proc/self/fd: exact,
    /// since no other test opens anything beneath this test's own directory.
    private func descriptorsOpen(beneath path: String) -> [String] {
        let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return numbers.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
            .filter { $0 == path || $0.hasPrefix(path + "/") }
    }

    /// A directory of this test's own, by its canonical path; removed afterwards.
    private final class Scratch {
        let path: String

        init() throws {
            let made = try #require(mkdtemp(strdup(NSTemporaryDirectory() + "/airlock-source.XXXXXX")))
            defer { free(made) }
            path = URL(fileURLWithPath: String(cString: made)).resolvingSymlinksInPath().path
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test("a source holds its directory while a copy lives; a read file and the directory are closed after")
    func readThenDropped() throws {
        let scratch = try Scratch()
        try Data("{\"root\": \"var\"}".utf8).write(to: URL(fileURLWithPath: scratch.path + "/airlock.json"))
        do {
            let source = try ConfigurationSource.locate(scratch.path + "/airlock.json")
            let copy = source
            #expect(descriptorsOpen(beneath: scratch.path) == [scratch.path])
            #expect(try source.read().root == "var")
            #expect(descriptorsOpen(beneath: scratch.path) == [scratch.path])
            withExtendedLifetime(source) {}
            #expect(try copy.read().root == "var")
        }
        #expect(descriptorsOpen(beneath: scratch.path).isEmpty)
        #expect(try Configuration.load(path: scratch.path + "/airlock.json").root == "var")
        #expect(descriptorsOpen(beneath: scratch.path).isEmpty)
    }

    @Test("a link, a directory or a missing file: refused, nothing left open")
    func refusals() throws {
        let scratch = try Scratch()
        try Data("{}".utf8).write(to: URL(fileURLWithPath: scratch.path + "/real.json"))
        try FileManager.default.createSymbolicLink(atPath: scratch.path + "/airlock.json", withDestinationPath: "real.json")
        try FileManager.default.createDirectory(atPath: scratch.path + "/folder.json", withIntermediateDirectories: false)
        for name in ["airlock.json", "folder.json", "missing.json"] {
            #expect(throws: ConfigurationError.self) { try Configuration.load(path: scratch.path + "/" + name) }
            #expect(descriptorsOpen(beneath: scratch.path).isEmpty, "\(name)")
        }
        #expect(throws: ConfigurationError.self) { try Configuration.load(path: scratch.path + "/gone/airlock.json") }
        #expect(descriptorsOpen(beneath: scratch.path).isEmpty)
    }
}
