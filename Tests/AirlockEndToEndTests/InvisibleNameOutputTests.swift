import AirlockTestSupport
import Foundation
import Testing

/// Names holding bidirectional controls or invisible characters are refused, and every
/// output a person reads shows them escaped as `\u{XXXX}`, never as the character a
/// terminal would act on; JSON outputs keep the exact name.
@Suite("Invisible and bidirectional characters: refused, and escaped in every human-readable output")
struct InvisibleNameOutputTests {
    /// The drop's own name holds U+2067 (a right-to-left isolate); its entry, U+202E.
    static let dropName = "invoice\u{2067}piz.exe\u{2069}.zip"
    static let entryName = "invoice\u{202E}fdp.exe"
    static let invisible: [Unicode.Scalar] = ["\u{202E}", "\u{2067}", "\u{2069}"]

    /// One rejected drop: the sandbox and its quarantine id.
    func rejected() throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Data(contentsOf: Samples.fixture("zip-bidi-override.zip")), as: Self.dropName)
        let run = try sandbox.runOnce()
        expectEqual(run.status, 0, "\(run.stderr)")
        let event = try #require(run.events.first)
        expectEqual(event.reason, "unsafe-path")
        expectEqual(event.drop, Self.dropName, "the event keeps the exact drop name")
        expectEqual(event.entry, Self.entryName, "the event keeps the exact entry name")
        expectEscaped(run.stderr, names: [#"invoice\u{2067}piz.exe\u{2069}.zip"#])
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), Data(contentsOf: Samples.fixture("zip-bidi-override.zip")))
        expectEqual(quarantined.report.entry, Self.entryName)
        try sandbox.expectInvariants()
        return (sandbox, quarantined.id)
    }

    func expectEscaped(_ text: String, names: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for scalar in Self.invisible {
            expect(!text.unicodeScalars.contains(scalar), "raw U+\(String(scalar.value, radix: 16)) in: \(text)",
                    sourceLocation: sourceLocation)
        }
        for name in names {
            expect(text.contains(name), "\(name) not in: \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test("run's log escapes the drop's name; its events keep it exactly")
    func runLog() throws {
        _ = try rejected()
    }

    @Test("quarantine list escapes the drop and the entry; --json keeps them")
    func list() throws {
        let (sandbox, _) = try rejected()
        let root = ["--root", sandbox.root.path]
        let text = try airlock(["quarantine", "list"] + root)
        expectEqual(text.status, 0, "\(text.stderr)")
        expectEscaped(text.stdout, names: [#"invoice\u{2067}piz.exe\u{2069}.zip"#, #"invoice\u{202E}fdp.exe"#])
        let json = try airlock(["quarantine", "list", "--json"] + root).documents(QuarantineListing.self)
        expectEqual(json.first?.drop, Self.dropName)
        expectEqual(json.first?.entry, Self.entryName)
    }

    @Test("quarantine show escapes the drop and the entry; --json keeps them")
    func show() throws {
        let (sandbox, id) = try rejected()
        let text = try airlock(["quarantine", "show", id, "--root", sandbox.root.path])
        expectEqual(text.status, 0, "\(text.stderr)")
        expectEscaped(text.stdout, names: [#"invoice\u{2067}piz.exe\u{2069}.zip"#, #"invoice\u{202E}fdp.exe"#])
        let json = try airlock(["quarantine", "show", id, "--json", "--root", sandbox.root.path]).documents(Report.self)
        expectEqual(json.first?.drop, Self.dropName)
    }

    @Test("quarantine contents escapes entry names; --json keeps them")
    func contents() throws {
        let (sandbox, id) = try rejected()
        let text = try airlock(["quarantine", "contents", id, "--root", sandbox.root.path])
        expectEqual(text.status, 0, "\(text.stderr)")
        expectEscaped(text.stdout, names: [#"invoice\u{202E}fdp.exe"#])
        let json = try airlock(["quarantine", "contents", id, "--json", "--root", sandbox.root.path]).documents(ContentsEntry.self)
        expect(json.contains { $0.entry == Self.entryName }, "\(json)")
    }

    @Test("history escapes the drop's name; --json keeps it")
    func history() throws {
        let (sandbox, _) = try rejected()
        let text = try airlock(["history", "--root", sandbox.root.path])
        expectEqual(text.status, 0, "\(text.stderr)")
        expectEscaped(text.stdout, names: [#"invoice\u{2067}piz.exe\u{2069}.zip"#])
        let json = try airlock(["history", "--json", "--root", sandbox.root.path])
        expect(json.stdout.unicodeScalars.contains("\u{2067}") || json.stdout.contains(#"\u2067"#), "\(json.stdout)")
    }

    @Test("status escapes the name of a drop waiting in the inbox")
    func status() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Data("waiting".utf8), as: "x\u{202E}fdp.exe")
        let text = try airlock(["status", "--root", sandbox.root.path])
        expectEqual(text.status, 0, "\(text.stderr)")
        expectEscaped(text.stdout, names: [#"x\u{202E}fdp.exe"#])
    }

    @Test("check-path refuses the name and shows it escaped")
    func checkPath() throws {
        let result = try airlock(["check-path", Self.entryName, "\u{2764}\u{FE0F}.txt"])
        expectEqual(result.status, 65)
        expectEscaped(result.stdout, names: ["unsafe-path\tinvoice\\u{202E}fdp.exe", "ok\t\u{2764}\u{FE0F}.txt"])
    }

    @Test("a drop named with an invisible character that is accepted lands under its id, not its name")
    func acceptedDropName() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "report\u{202E}fdp.exe.zip")
        let run = try sandbox.runOnce()
        expectEqual(run.status, 0, "\(run.stderr)")
        let event = try #require(run.events.first)
        expectEqual(event.kind, .accepted, "\(event)")
        expectEqual(event.drop, "report\u{202E}fdp.exe.zip")
        let entries = try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path)
        expectEqual(entries, [event.id].compactMap { $0 }, "\(entries)")
        expectEscaped(run.stderr, names: [#"report\u{202E}fdp.exe.zip"#])
        try sandbox.expectInvariants()
    }
}
