import Foundation
import Testing

/// One case of fixtures/formats/manifest.json.
struct FormatCase: CustomTestStringConvertible, Sendable {
    let name: String
    let file: String
    let verdict: String
    let reason: String?
    let files: [String: String]
    /// Policy keys that override the defaults for this case.
    let policy: [String: Int]

    var testDescription: String { name }

    static let all: [FormatCase] = {
        let url = Binary.repository.appendingPathComponent("fixtures/formats/manifest.json")
        struct Listed: Decodable {
            let name: String
            let file: String
            let verdict: String
            let reason: String?
            let files: [String: String]?
            let policy: [String: Int]?
        }
        struct Manifest: Decodable { let cases: [Listed] }
        guard let data = try? Data(contentsOf: url), let cases = try? JSONDecoder().decode(Manifest.self, from: data).cases else { return [] }
        return cases.map { item in
            FormatCase(name: item.name, file: item.file, verdict: item.verdict, reason: item.reason, files: item.files ?? [:],
                       policy: item.policy ?? [:])
        }
    }()

    var fixture: URL { Binary.repository.appendingPathComponent("fixtures/formats").appendingPathComponent(file) }
}

@Suite("Optional formats: RAR, ISO 9660, CAB and cpio under the same rules, only when the format list names them")
struct FormatTests {
    static let everything = ["zip", "tar", "7z", "keyed", "rar", "iso9660", "cab", "cpio"]

    @Test("the manifest covers every optional format, valid and hostile")
    func manifestCoversFormats() {
        for prefix in ["iso-", "cab-", "cpio-newc-", "cpio-odc-"] {
            #expect(FormatCase.all.contains { $0.name.hasPrefix(prefix) && $0.verdict == "accepted" }, "no valid \(prefix) case")
            #expect(FormatCase.all.contains { $0.name.hasPrefix(prefix) && $0.verdict == "rejected" }, "no hostile \(prefix) case")
        }
    }

    @Test("with every format enabled, each archive reaches its manifest verdict with the invariants intact",
          arguments: FormatCase.all)
    func formatCase(_ item: FormatCase) throws {
        let sandbox = try Self.sandbox(formats: Self.everything, policy: item.policy)
        let original = try Data(contentsOf: item.fixture)
        try sandbox.drop(original, as: item.file)
        let result = try sandbox.runOnce()
        #expect(result.status == 0, "run --once failed: \(result.stderr)")
        let event = try #require(result.events.first)
        #expect(result.events.count == 1, "\(result.stdout)")
        try sandbox.expectInvariants()
        if item.verdict == "accepted" {
            #expect(event.kind == .accepted, "\(event)")
            #expect(event.output == "outbox/" + String(item.file[..<item.file.lastIndex(of: ".")!]))
            let entry = sandbox.outbox.appendingPathComponent(String(item.file[..<item.file.lastIndex(of: ".")!]))
            let listed = try sandbox.listing(entry).filter { !$0.hasSuffix("/") }
            #expect(listed.sorted() == item.files.keys.sorted())
            #expect(try sha256Hexes(Array(item.files.keys), in: entry) == item.files, "file contents differ")
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path) == [])
        } else {
            #expect(event.kind == .rejected, "\(event)")
            #expect(event.reason == item.reason, "\(event)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [])
            let quarantined = try #require(try sandbox.onlyQuarantined())
            #expect(try Data(contentsOf: quarantined.drop) == original, "the quarantined bytes are not the original")
            #expect(quarantined.report.reason == item.reason)
        }
    }

    @Test("by default a valid archive of an optional format is unsupported-format, naming the setting",
          arguments: FormatCase.all.filter { $0.verdict == "accepted" })
    func refusedByDefault(_ item: FormatCase) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let original = try Data(contentsOf: item.fixture)
        try sandbox.drop(original, as: item.file)
        let result = try sandbox.runOnce()
        let event = try #require(result.events.first)
        #expect(event.reason == "unsupported-format", "\(event)")
        #expect(event.detail?.contains("\"formats\"") == true, "\(event)")
        try sandbox.expectInvariants()
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [])
        #expect(try sandbox.onlyQuarantined().map { try Data(contentsOf: $0.drop) } == original)
    }

    @Test("a default format left out of the list is refused too, and an unknown name is a configuration error")
    func listIsExplicit() throws {
        let sandbox = try Self.sandbox(formats: ["tar"])
        let zip = ZipBuild(entries: [.init(name: Array("a.txt".utf8), data: Array("a".utf8))]).bytes
        try sandbox.drop(zip, as: "a.zip")
        let result = try sandbox.runOnce()
        #expect(result.events.first?.reason == "unsupported-format", "\(result.stdout)")
        try sandbox.expectInvariants()
        for bad in [["mtree"], ["raw"], [], ["zip", "zip"]] {
            let refused = try Self.sandbox(formats: bad)
            let run = try refused.runOnce()
            #expect(run.status == 78, "\(bad): \(run.stderr)")
            #expect(run.stderr.contains("formats"), "\(run.stderr)")
        }
    }

    /// A sandbox whose airlock.json has the top-level `formats` list `formats`, and `policy`.
    static func sandbox(formats: [String], policy: [String: Int] = [:]) throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: policy)
        let file = sandbox.root.appendingPathComponent("airlock.json")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        config["formats"] = formats
        try JSONSerialization.data(withJSONObject: config).write(to: file)
        return sandbox
    }
}
