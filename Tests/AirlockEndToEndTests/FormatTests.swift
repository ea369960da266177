import AirlockTestSupport
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
            expect(FormatCase.all.contains { $0.name.hasPrefix(prefix) && $0.verdict == "accepted" }, "no valid \(prefix) case")
            expect(FormatCase.all.contains { $0.name.hasPrefix(prefix) && $0.verdict == "rejected" }, "no hostile \(prefix) case")
        }
    }

    /// One root and one `run --once` per policy (`DropRun` checks the batch as a
    /// whole), each case's verdict checked on its own drop; every issue names the case.
    @Test("with every format enabled, each archive reaches its manifest verdict with the invariants intact",
          arguments: PolicyBatch.of(FormatCase.all, policy: \.policy))
    func formatCases(_ batch: PolicyBatch<FormatCase>) throws {
        let sandbox = try Self.sandbox(formats: Self.everything, policy: batch.policy)
        let run = try DropRun(sandbox, drops: batch.cases.map { (name: $0.file, bytes: try Data(contentsOf: $0.fixture)) })
        for item in batch.cases {
            guard let event = run.events[item.file] else { continue }
            if item.verdict == "accepted" {
                let output = String(item.file[..<item.file.lastIndex(of: ".")!])
                expectEqual(event.kind, .accepted, "\(item.file): \(event)")
                expectEqual(event.output, "outbox/" + output, "\(item.file): \(event)")
                guard event.kind == .accepted else { continue }
                let entry = sandbox.outbox.appendingPathComponent(output)
                let listed = try sandbox.listing(entry).filter { !$0.hasSuffix("/") }
                expectEqual(listed.sorted(), item.files.keys.sorted(), "\(item.file)")
                try expectEqual(sha256Hexes(Array(item.files.keys), in: entry), item.files, "\(item.file): file contents differ")
            } else {
                expectEqual(event.kind, .rejected, "\(item.file): \(event)")
                expectEqual(event.reason, item.reason, "\(item.file): \(event)")
                try expectEqual(run.quarantined(item.file, event)?.reason, item.reason, "\(item.file)")
            }
        }
    }

    /// All the valid archives in one root with the default configuration, and one `run --once`.
    @Test("by default a valid archive of an optional format is unsupported-format, naming the setting")
    func refusedByDefault() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let valid = FormatCase.all.filter { $0.verdict == "accepted" }
        let run = try DropRun(sandbox, drops: valid.map { (name: $0.file, bytes: try Data(contentsOf: $0.fixture)) })
        for item in valid {
            guard let event = run.events[item.file] else { continue }
            expectEqual(event.reason, "unsupported-format", "\(item.file): \(event)")
            expectEqual(event.detail?.contains("\"formats\""), true, "\(item.file): \(event)")
            try expect(run.quarantined(item.file, event) != nil, "\(item.file): not quarantined")
        }
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
    }

    @Test("a default format left out of the list is refused too, and an unknown name is a configuration error")
    func listIsExplicit() throws {
        let sandbox = try Self.sandbox(formats: ["tar"])
        let zip = ZipBuild(entries: [.init(name: Array("a.txt".utf8), data: Array("a".utf8))]).bytes
        try sandbox.drop(zip, as: "a.zip")
        let result = try sandbox.runOnce()
        expectEqual(result.events.first?.reason, "unsupported-format", "\(result.stdout)")
        try sandbox.expectInvariants()
        for bad in [["mtree"], ["raw"], [], ["zip", "zip"]] {
            let refused = try Self.sandbox(formats: bad)
            let run = try refused.runOnce()
            expectEqual(run.status, 78, "\(bad): \(run.stderr)")
            expect(run.stderr.contains("formats"), "\(run.stderr)")
        }
    }

    /// Names a person gives files, which start with another format's magic number
    /// (bzip2's "BZh" and a block size, cpio's "070701" and "070707", CAB's "MSCF"
    /// and four zero bytes): a tar whose first member has one is still a tar.
    @Test("a tar whose first member's name starts with another format's magic is decoded as a tar")
    func magicLikeNames() throws {
        let sandbox = try Self.sandbox(formats: Self.everything)
        let names = ["BZh91-notes.txt", "070701-report.txt", "070707.csv", "MSCF"]
        let run = try DropRun(sandbox, drops: names.enumerated().map { index, name in
            (name: "named-\(index).tar", bytes: TarBuild(entries: [.init(name: Array(name.utf8), data: Array("first \(name)\n".utf8)),
                                                                    .init(name: Array("second.txt".utf8), data: Array("second\n".utf8))]).bytes)
        })
        for (index, name) in names.enumerated() {
            guard let event = run.events["named-\(index).tar"] else { continue }
            expect(event.kind == .accepted && event.output == "outbox/named-\(index)", "\(name): \(event)")
            guard event.kind == .accepted else { continue }
            let entry = sandbox.outbox.appendingPathComponent("named-\(index)")
            try expectEqual(sandbox.listing(entry).sorted(), [name, "second.txt"].sorted(), "\(name)")
            try expectEqual(Data(contentsOf: entry.appendingPathComponent(name)), Data("first \(name)\n".utf8), "\(name)")
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
