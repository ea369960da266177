import AirlockTestSupport
import Foundation
import Testing

/// Runs one drop through `run --once` in a fresh sandbox configured by
/// `sections`, checks the invariants, and returns the event and the sandbox.
private func intake(_ data: Data, as name: String, configure sections: [String: [String: Any]] = [:]) throws -> (Event, Sandbox) {
    let sandbox = try Sandbox()
    try sandbox.initialise()
    for (section, values) in sections { try sandbox.configure(section, values) }
    try sandbox.drop(data, as: name)
    let result = try sandbox.runOnce()
    expectEqual(result.status, 0, "run --once failed: \(result.stderr)")
    expectEqual(result.events.count, 1, "\(result.stdout)")
    try sandbox.expectInvariants()
    return (try #require(result.events.first), sandbox)
}

/// The outbox holds exactly `files` (name → content) under `output`.
private func expectLanded(_ sandbox: Sandbox, _ event: Event, _ output: String, _ files: [String: String],
                          directories: [String] = []) throws {
    expectEqual(event.kind, .accepted, "\(event)")
    try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [])
    let entry = sandbox.outbox.appendingPathComponent(output)
    try expectEqual(sandbox.listing(entry).sorted(), (Array(files.keys) + directories).sorted())
    for (name, content) in files {
        try expectEqual(Data(contentsOf: entry.appendingPathComponent(name)), Data(content.utf8))
    }
}

/// The drop was rejected for `reason`, its original bytes are in quarantine, and the outbox is empty.
private func expectRejected(_ sandbox: Sandbox, _ event: Event, _ reason: String, original: Data) throws -> Report? {
    expectEqual(event.kind, .rejected, "\(event)")
    expectEqual(event.reason, reason, "\(event)")
    try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
    guard let quarantined = try sandbox.onlyQuarantined() else { return nil }
    try expectEqual(Data(contentsOf: quarantined.drop), original)
    expectEqual(quarantined.report.reason, reason)
    return quarantined.report
}

@Suite("ZIP names without the UTF-8 flag: UTF-8 if valid, else the legacy code page")
struct ZipLegacyNameTests {
    /// Windows Explorer on a Western system: "Übersicht.txt" in CP437, 0x9A for "Ü".
    static let explorerName: [UInt8] = [0x9A] + Array("bersicht.txt".utf8)

    @Test("a CP437 name, as Windows Explorer writes it, lands as UTF-8 by default")
    func cp437ByDefault() throws {
        let zip = ZipBuild(entries: [.init(name: Self.explorerName, data: Array("hallo\n".utf8)),
                                     .init(name: Array("Ordner/".utf8), data: [])]).bytes
        let (event, sandbox) = try intake(zip, as: "explorer.zip")
        try expectLanded(sandbox, event, "explorer", ["Übersicht.txt": "hallo\n"], directories: ["Ordner/"])
    }

    @Test("a valid UTF-8 name without the flag (Finder, Info-ZIP on Linux) stays UTF-8")
    func unflaggedUTF8() throws {
        let zip = ZipBuild(entries: [.init(name: Array("naïve.txt".utf8), data: Array("x".utf8))]).bytes
        let (event, sandbox) = try intake(zip, as: "linux.zip")
        try expectLanded(sandbox, event, "linux", ["naïve.txt": "x"])
    }

    @Test("zip.legacy_encoding CP932 reads a Japanese Windows name")
    func configuredCodePage() throws {
        // "日本語.txt" in Shift_JIS (CP932).
        let name: [UInt8] = [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA] + Array(".txt".utf8)
        let zip = ZipBuild(entries: [.init(name: name, data: Array("こんにちは".utf8))]).bytes
        let (event, sandbox) = try intake(zip, as: "japan.zip", configure: ["zip": ["legacy_encoding": "CP932"]])
        try expectLanded(sandbox, event, "japan", ["日本語.txt": "こんにちは"])
    }

    @Test("the decoded name is what the path policy judges; the report keeps the stored bytes")
    func decodedNameJudged() throws {
        // "../Ü.txt" in CP437: the traversal is judged on the decoded name.
        let zip = ZipBuild(entries: [.init(name: Array("../".utf8) + [0x9A] + Array(".txt".utf8), data: Array("x".utf8))]).bytes
        let (event, sandbox) = try intake(zip, as: "climb.zip")
        let report = try #require(try expectRejected(sandbox, event, "unsafe-path", original: zip))
        expectEqual(report.entry, "../Ü.txt")
        expectEqual(report.detail.contains("CP437 as bytes 2e2e2f9a2e747874"), true, "\(report)")
    }

    @Test("a Unicode path field that agrees with the name and its CRC wins, and lands")
    func unicodePathAgrees() throws {
        let extra = ZipBuild.unicodePath(for: Self.explorerName, naming: "Übersicht.txt")
        let zip = ZipBuild(entries: [.init(name: Self.explorerName, data: Array("hallo\n".utf8), extra: extra)]).bytes
        let (event, sandbox) = try intake(zip, as: "unicode.zip")
        try expectLanded(sandbox, event, "unicode", ["Übersicht.txt": "hallo\n"])
    }

    @Test("a Unicode path field bound to the name by its CRC that names another file is corrupt-archive")
    func unicodePathDisagrees() throws {
        let extra = ZipBuild.unicodePath(for: Self.explorerName, naming: "../evil.txt", crcMatches: true)
        let zip = ZipBuild(entries: [.init(name: Self.explorerName, data: Array("x".utf8), extra: extra)]).bytes
        let (event, sandbox) = try intake(zip, as: "liar.zip")
        let report = try #require(try expectRejected(sandbox, event, "corrupt-archive", original: zip))
        expectEqual(report.detail.contains("Unicode path field"), true, "\(report)")
    }

    @Test("a Unicode path field whose CRC is of another name is ignored, as its readers ignore it: the name lands")
    func staleUnicodePathIgnored() throws {
        let extra = ZipBuild.unicodePath(for: Self.explorerName, naming: "../evil.txt", crcMatches: false)
        let zip = ZipBuild(entries: [.init(name: Self.explorerName, data: Array("x".utf8), extra: extra)]).bytes
        let (event, sandbox) = try intake(zip, as: "stale.zip")
        try expectLanded(sandbox, event, "stale", ["Übersicht.txt": "x"])
    }

    @Test("an encoding iconv does not know is a configuration error naming the key")
    func unknownEncoding() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("zip", ["legacy_encoding": "KLINGON-1"])
        let result = try sandbox.runOnce()
        expectEqual(result.status, 78)
        expect(result.stderr.contains("zip.legacy_encoding"), "\(result.stderr)")
        try sandbox.configure("zip", ["legacy_encoding": "CP437//TRANSLIT"])
        try expectEqual(sandbox.runOnce().status, 78)
    }
}

@Suite("tar names that are not UTF-8: rejected unless tar.legacy_encoding names their encoding")
struct TarLegacyNameTests {
    /// "café.txt" as GNU tar writes it on a Latin-1 system.
    static let latin1Name: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)

    @Test("without tar.legacy_encoding the name is unsafe-path, and the detail says what to set",
          arguments: [false, true])
    func rejectedByDefault(_ pax: Bool) throws {
        let tar = TarBuild(entries: [.init(name: Self.latin1Name, data: Array("x".utf8), paxBinary: pax)]).bytes
        let (event, sandbox) = try intake(tar, as: "latin.tar")
        let report = try #require(try expectRejected(sandbox, event, "unsafe-path", original: tar))
        expectEqual(report.detail.contains("tar.legacy_encoding"), true, "\(report)")
    }

    @Test("with tar.legacy_encoding LATIN1 the name lands as UTF-8", arguments: [false, true])
    func decodedWhenConfigured(_ pax: Bool) throws {
        let tar = TarBuild(entries: [.init(name: Self.latin1Name, data: Array("x".utf8), paxBinary: pax),
                                     .init(name: Array("plain.txt".utf8), data: Array("y".utf8))]).bytes
        let (event, sandbox) = try intake(tar, as: "latin.tar", configure: ["tar": ["legacy_encoding": "LATIN1"]])
        try expectLanded(sandbox, event, "latin", ["café.txt": "x", "plain.txt": "y"])
    }
}
