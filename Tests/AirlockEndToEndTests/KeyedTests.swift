import Foundation
import Testing

/// One case of fixtures/keyed/manifest.json.
struct KeyedCase: CustomTestStringConvertible, Sendable {
    let name: String
    let file: String
    let verdict: String
    let reason: String?
    let classNames: [String]?
    let policy: [String: Int]
    let expect: Rendered?

    /// A rendered memo, or what the manifest expects of one.
    struct Memo: Decodable, Sendable {
        let schema: Int?
        let index: Int?
        let text: String?
    }

    /// memo.json or memos.json as airlock renders it, or the manifest's expectation of it.
    struct Rendered: Decodable, Sendable {
        let format: String?
        let version: Int?
        let memo: Memo?
        let memos: [Memo]?
        let memosCount: Int?

        enum CodingKeys: String, CodingKey { case format, version, memo, memos, memosCount = "memos_count" }
    }

    var testDescription: String { name }

    static let all: [KeyedCase] = {
        struct Keyed: Decodable {
            let classNames: [String]?
            enum CodingKeys: String, CodingKey { case classNames = "class_names" }
        }
        struct Listed: Decodable {
            let name: String
            let file: String
            let verdict: String
            let reason: String?
            let keyed: Keyed?
            let policy: [String: Int]?
            let expect: Rendered?
        }
        struct Manifest: Decodable { let cases: [Listed] }
        let url = Binary.repository.appendingPathComponent("fixtures/keyed/manifest.json")
        guard let data = try? Data(contentsOf: url), let cases = try? JSONDecoder().decode(Manifest.self, from: data).cases else { return [] }
        return cases.map { item in
            KeyedCase(name: item.name, file: item.file, verdict: item.verdict, reason: item.reason, classNames: item.keyed?.classNames,
                      policy: item.policy ?? [:], expect: item.expect)
        }
    }()

    var fixture: URL { Binary.repository.appendingPathComponent("fixtures/keyed").appendingPathComponent(file) }
}

@Suite("Keyed archives: historical samples and one test per contract")
struct KeyedTests {
    @Test("the manifest covers every keyed-archive reason")
    func coverage() {
        let reasons = Set(KeyedCase.all.compactMap(\.reason))
        for reason in ["wrong-root-class", "unknown-class", "unsupported-schema", "invalid-field", "corrupt-archive",
                       "too-many-entries", "unsupported-format", "file-too-large", "total-too-large", "ratio-too-high"] {
            #expect(reasons.contains(reason), "no keyed fixture for \(reason)")
        }
    }

    @Test("each sample ends where the manifest says, and nothing in the outbox is written or changed on a rejection", arguments: KeyedCase.all)
    func sample(_ item: KeyedCase) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: item.policy)
        if let names = item.classNames {
            try sandbox.configure("keyed", ["class_names": names])
        }
        // inspect, under the same configuration, reaches the verdict run reaches.
        let inspected = try #require(try airlock(["inspect", item.fixture.path, "--root", sandbox.root.path]).events.first)
        #expect(inspected.verdict?.rawValue == item.verdict, "inspect: \(inspected)")
        #expect(inspected.reason == item.reason, "inspect: \(inspected)")
        // An earlier result under the name this drop would take: never modified.
        let outputName = String(item.file.dropLast(".plist".count))
        let earlier = sandbox.outbox.appendingPathComponent(outputName)
        try FileManager.default.createDirectory(at: earlier, withIntermediateDirectories: false)
        try Data("earlier result".utf8).write(to: earlier.appendingPathComponent("memo.json"))
        let original = try Data(contentsOf: item.fixture)
        try sandbox.drop(original, as: item.file)

        let result = try sandbox.runOnce()
        #expect(result.status == 0, "\(result.stderr)")
        let event = try #require(result.events.first)
        try sandbox.expectInvariants()
        #expect(try Data(contentsOf: earlier.appendingPathComponent("memo.json")) == Data("earlier result".utf8))
        #expect(try sandbox.listing(earlier) == ["memo.json"])

        if item.verdict == "accepted" {
            #expect(event.kind == .accepted, "\(event)")
            #expect(event.output == "outbox/\(outputName)-2", "a new result gets a new name")
            let entry = sandbox.outbox.appendingPathComponent(outputName + "-2")
            let expect = try #require(item.expect)
            let isArray = expect.memos != nil || expect.memosCount != nil
            let file = isArray ? "memos.json" : "memo.json"
            #expect(try sandbox.listing(entry) == [file])
            let rendered = try JSONDecoder().decode(KeyedCase.Rendered.self, from: Data(contentsOf: entry.appendingPathComponent(file)))
            #expect(rendered.format == "airlock-memo")
            #expect(rendered.version == 1)
            if let memo = expect.memo {
                let got = rendered.memo
                #expect(got?.schema == memo.schema)
                // Scalar for scalar: an NFD text must not come back NFC.
                #expect(got?.text.map { Array($0.unicodeScalars) } == memo.text.map { Array($0.unicodeScalars) })
            }
            if let memos = expect.memos {
                let got = rendered.memos ?? []
                #expect(got.count == memos.count)
                for (a, b) in zip(got, memos) {
                    #expect(a.index == b.index)
                    #expect(a.text.map { Array($0.unicodeScalars) } == b.text.map { Array($0.unicodeScalars) })
                }
            }
            if let count = expect.memosCount {
                #expect(rendered.memos?.count == count)
            }
        } else {
            #expect(event.kind == .rejected, "\(event)")
            #expect(event.reason == item.reason, "\(event)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) == [outputName])
            let quarantined = try #require(try sandbox.onlyQuarantined())
            #expect(try Data(contentsOf: quarantined.drop) == original)
            #expect(quarantined.report.reason == item.reason)
            #expect(quarantined.report.format == "keyed")
        }
    }

    @Test("a keyed decoder that crashes ends as decoder-failed")
    func crash() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let original = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/keyed/memo-binary.plist"))
        try sandbox.drop(original, as: "memo.plist")
        let result = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": "abort"])
        #expect(result.events.first?.reason == "decoder-failed")
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        #expect(try Data(contentsOf: quarantined.drop) == original)
    }

    @Test("a keyed archive over the size limit is drop-too-large before any decoding")
    func tooLarge() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        var padded = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/keyed/memo-xml.plist"))
        padded.append(Data(repeating: 0x20, count: (1 << 20) + 1 - padded.count))
        try sandbox.drop(padded, as: "big.plist")
        let result = try sandbox.runOnce()
        #expect(result.events.first?.reason == "drop-too-large")
        try sandbox.expectInvariants()
    }

    @Test("keep_original keeps the archive beside the JSON")
    func keepOriginal() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("keyed", ["keep_original": true])
        let original = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/keyed/memo-binary.plist"))
        try sandbox.drop(original, as: "kept.plist")
        let result = try sandbox.runOnce()
        #expect(result.events.first?.kind == .accepted, "\(result.stdout) \(result.stderr)")
        let entry = sandbox.outbox.appendingPathComponent("kept")
        #expect(try sandbox.listing(entry).sorted() == ["memo.json", "original.plist"])
        #expect(try Data(contentsOf: entry.appendingPathComponent("original.plist")) == original)
        try sandbox.expectInvariants()
    }
}
