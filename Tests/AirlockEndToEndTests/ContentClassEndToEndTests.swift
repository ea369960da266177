import AirlockTestSupport
import Foundation
import Testing

/// One case of the evasion corpus (fixtures/classes/cases.json, written by make_classes.py).
struct EvasionCase: Sendable, CustomStringConvertible {
    let file: String
    let what: String
    let classes: [String]
    let noExecutables: String
    let imagesClasses: String

    var description: String { "\(file): \(what)" }

    static let directory = Binary.repository.appendingPathComponent("fixtures/classes")

    static let all: [EvasionCase] = {
        struct Row: Decodable {
            let file: String
            let what: String
            let classes: [String]
            let noExecutables: String
            let imagesClasses: String

            enum CodingKeys: String, CodingKey {
                case file, classes
                case what = "case", noExecutables = "no_executables", imagesClasses = "images_classes"
            }
        }
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("cases.json")),
              let rows = try? JSONDecoder().decode([Row].self, from: data) else { return [] }
        return rows.map {
            EvasionCase(file: $0.file, what: $0.what, classes: $0.classes, noExecutables: $0.noExecutables, imagesClasses: $0.imagesClasses)
        }
    }()

    var bytes: [UInt8] { (try? [UInt8](Data(contentsOf: EvasionCase.directory.appendingPathComponent("files/" + file)))) ?? [] }
    /// The case alone in a ZIP, as a producer would drop it.
    var zip: [UInt8] { [UInt8](ZipBuild(entries: [.init(name: Array(file.utf8), data: bytes)]).bytes) }
    /// The drop's name: the case's index keeps names apart and free of the case's own dots.
    var dropName: String { "case-\(EvasionCase.all.firstIndex { $0.file == file }!).zip" }
}

/// The content section of a shipped profile in etc/.
func shippedProfile(_ name: String) throws -> [String: Any] {
    let data = try Data(contentsOf: Binary.repository.appendingPathComponent("etc/" + name))
    return (try JSONSerialization.jsonObject(with: data) as! [String: Any])["content"] as! [String: Any]
}

@Suite("Content classes end to end: the evasion corpus through the real binaries under the shipped profiles")
struct ContentClassEndToEndTests {
    /// Drops every case, each alone in a ZIP, and runs once: the events by drop name.
    private func runCorpus(_ sandbox: Sandbox, _ cases: [EvasionCase]) throws -> [String: Event] {
        for item in cases { try sandbox.drop(Data(item.zip), as: item.dropName) }
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        var events: [String: Event] = [:]
        for event in result.events { events[event.drop] = event }
        expectEqual(events.count, cases.count, "one event per drop: \(result.stdout)")
        try sandbox.expectInvariants()
        return events
    }

    /// The manifest's classes of the one file in an accepted case's entry, and its bytes there.
    private func landed(_ sandbox: Sandbox, _ event: Event, _ item: EvasionCase) throws -> (classes: [String]?, mime: String?) {
        let entry = sandbox.root.appendingPathComponent(try #require(event.output))
        try expectEqual(sandbox.listing(entry), [item.file], "exactly the case's file lands")
        try expectEqual([UInt8](Data(contentsOf: entry.appendingPathComponent(item.file))), item.bytes, "byte for byte")
        let file = try #require(try Manifest.read(in: entry).outboxFiles.first)
        return (file.classes, file.mimeType)
    }

    /// A rejected case: disallowed-type naming the entry and one of its denied classes; the original kept.
    private func expectDenied(_ sandbox: Sandbox, _ event: Event, _ item: EvasionCase, denied: Set<String>) throws {
        expect(event.kind == .rejected && event.reason == "disallowed-type", "\(item): \(event)")
        expectEqual(event.entry, item.file, "\(item): \(event)")
        let id = try #require(event.id)
        let directory = sandbox.quarantine.appendingPathComponent(id)
        try expectEqual([UInt8](Data(contentsOf: directory.appendingPathComponent("drop"))), item.zip, "\(item): the original is kept")
        let detail = try Report.read(directory.appendingPathComponent("report.json")).detail
        expect(detail.contains("content.deny_classes") && denied.contains { detail.contains("is \($0),") }, "\(item): \(detail)")
    }

    @Test("no-executables: every case reaches its verdict by class, without libmagic; accepted ones land with their classes")
    func noExecutables() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", try shippedProfile("content-no-executables.json"))
        let events = try runCorpus(sandbox, EvasionCase.all)
        for item in EvasionCase.all {
            let event = try #require(events[item.dropName], "\(item)")
            if item.noExecutables == "rejected" {
                try expectDenied(sandbox, event, item, denied: ["executable", "script", "macro-document"])
            } else {
                expectEqual(event.kind, .accepted, "\(item): \(event)")
                guard event.kind == .accepted else { continue }
                let (classes, mime) = try landed(sandbox, event, item)
                expectEqual(classes, item.classes, "\(item)")
                expectEqual(mime, nil, "\(item): libmagic ran although no rule names a MIME type")
            }
        }
        try expectEqual(sandbox.listing(sandbox.outbox).filter { !$0.hasSuffix("/") }.count, EvasionCase.all.filter { $0.noExecutables == "accepted" }.count)
    }

    @Test("images: polyglots and scripted SVG are disallowed-type as active-content whatever libmagic says; clean images land")
    func images() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", try shippedProfile("content-images.json"))
        let cases = EvasionCase.all.filter { item in [".svg", ".gif", ".jpg"].contains { item.file.hasSuffix($0) } }
        expect(cases.count >= 7)
        let events = try runCorpus(sandbox, cases)
        for item in cases {
            let event = try #require(events[item.dropName], "\(item)")
            if item.imagesClasses == "rejected" {
                try expectDenied(sandbox, event, item, denied: ["active-content"])
            } else {
                expectEqual(event.kind, .accepted, "\(item): \(event)")
                guard event.kind == .accepted else { continue }
                let (classes, mime) = try landed(sandbox, event, item)
                expect(classes == [] && (mime as? String ?? "").hasPrefix("image/"), "\(item): \(String(describing: classes)) \(String(describing: mime))")
            }
        }
    }

    @Test("inspect reaches the verdict run reaches, naming the entry, for an ELF with EI_DATA 0 and a .docm renamed .docx")
    func inspectAgrees() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("content", try shippedProfile("content-no-executables.json"))
        try FileManager.default.createDirectory(at: sandbox.logs, withIntermediateDirectories: true)
        for file in ["elf-ei-data-0", "report.docx"] {
            let item = try #require(EvasionCase.all.first { $0.file == file })
            let copy = sandbox.logs.appendingPathComponent(item.dropName)
            try Data(item.zip).write(to: copy)
            let result = try airlock(["inspect", copy.path, "--root", sandbox.root.path])
            let event = try #require(result.events.first)
            expect(result.status == 65 && event.reason == "disallowed-type" && event.entry == file,
                    "\(result.status) \(event)")
        }
    }

    @Test("by default libmagic does not run and status says so; content.detect_types brings mime_type back")
    func libmagicOnlyWhenAsked() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let item = try #require(EvasionCase.all.first { $0.file == "shebang-python" })
        let quiet = try airlock(["status", "--root", sandbox.root.path])
        expect(quiet.stdout.contains("libmagic does not run") && quiet.stdout.contains("content.deny_classes denies none"), "\(quiet.stdout)")
        try sandbox.drop(Data(item.zip), as: "first.zip")
        let event = try #require(try sandbox.runOnce().events.first)
        expectEqual(event.kind, .accepted, "\(event)")
        let (classes, mime) = try landed(sandbox, event, item)
        expect(classes == ["executable", "script"] && mime == nil, "\(String(describing: classes)) \(String(describing: mime))")
        try expectEqual(sandbox.lastJournalRecord(.accepted)?.accepted?.types, nil)
        try sandbox.configure("content", ["detect_types": true])
        let loud = try airlock(["status", "--root", sandbox.root.path])
        expect(loud.stdout.contains("libmagic runs (content.detect_types is true)"), "\(loud.stdout)")
        try sandbox.drop(Data(item.zip), as: "second.zip")
        _ = try sandbox.runOnce()
        let record = try #require(try sandbox.lastJournalRecord(.accepted))
        expectEqual(record.accepted?.types?["shebang-python"]?.contains("python"), true, "\(record)")
        try sandbox.expectInvariants()
    }

    @Test("a drop of 1,000 scripts with long names is judged whole: every file's classes reach the manifest, and the profile names the first")
    func manyClassifiedFiles() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let directory = String(repeating: "a-directory-name-long-enough-to-matter/", count: 5)
        let names = (0..<1000).map { directory + "tool-\(1000 + $0).py" }
        let zip = ZipBuild(entries: names.map { .init(name: Array($0.utf8), data: Array("print(1)\n".utf8)) }).bytes
        try sandbox.drop(zip, as: "tools.zip")
        let event = try #require(try sandbox.runOnce().events.first)
        expectEqual(event.kind, .accepted, "\(event)")
        let entry = sandbox.root.appendingPathComponent(try #require(event.output))
        let files = try Manifest.read(in: entry).outboxFiles
        expect(files.count == 1000 && files.allSatisfy { $0.classes == ["script"] })
        try FileManager.default.removeItem(at: entry)
        try sandbox.configure("content", try shippedProfile("content-no-executables.json"))
        try sandbox.drop(zip, as: "tools.zip")
        let report = try sandbox.expectRejected(try sandbox.runOnce(), "disallowed-type", entry: names[0], original: zip)
        expect((report?.detail ?? "").contains("is script, which content.deny_classes names"))
    }
}
