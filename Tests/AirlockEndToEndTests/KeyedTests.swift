import AirlockTestSupport
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
    /// Where an accepted sample would land with the outbox empty.
    var outputName: String { String(file.dropLast(".plist".count)) }
    /// The configuration the sample needs, as one key for grouping: its policy,
    /// and its class names under a key no policy setting has.
    var configurationKey: [String: Int] {
        var key = policy
        if let classNames { key["class_names: " + classNames.joined(separator: ",")] = 1 }
        return key
    }
}

@Suite("Keyed archives: historical samples and one test per contract")
struct KeyedTests {
    @Test("the manifest covers every keyed-archive reason")
    func coverage() {
        let reasons = Set(KeyedCase.all.compactMap(\.reason))
        for reason in ["wrong-root-class", "unknown-class", "unsupported-schema", "invalid-field", "corrupt-archive",
                       "too-many-entries", "unsupported-format", "file-too-large", "total-too-large", "ratio-too-high"] {
            expect(reasons.contains(reason), "no keyed fixture for \(reason)")
        }
    }

    /// One root and one `run --once` per configuration (policy and class names),
    /// each sample inspected on its own and its verdict checked on its own drop
    /// (`DropRun` checks the batch as a whole); every issue names the sample.
    @Test("each sample ends where the manifest says, and nothing in the outbox is written or changed on a rejection",
          arguments: PolicyBatch.of(KeyedCase.all, policy: \.configurationKey))
    func samples(_ batch: PolicyBatch<KeyedCase>) throws {
        let sandbox = try Sandbox()
        let first = try #require(batch.cases.first)
        try sandbox.initialise(policy: first.policy)
        if let names = first.classNames {
            try sandbox.configure("keyed", ["class_names": names])
        }
        for item in batch.cases {
            // inspect, under the same configuration, reaches the verdict run reaches.
            let inspected = try airlock(["inspect", item.fixture.path, "--root", sandbox.root.path]).events.first
            expectEqual(inspected?.verdict?.rawValue, item.verdict, "\(item.file): inspect: \(String(describing: inspected))")
            expectEqual(inspected?.reason, item.reason, "\(item.file): inspect: \(String(describing: inspected))")
            // An earlier result under the name this drop would take: never modified.
            let earlier = sandbox.outbox.appendingPathComponent(item.outputName)
            try FileManager.default.createDirectory(at: earlier, withIntermediateDirectories: false)
            try Data("earlier result".utf8).write(to: earlier.appendingPathComponent("memo.json"))
        }
        let run = try DropRun(sandbox, drops: batch.cases.map { (name: $0.file, bytes: try Data(contentsOf: $0.fixture)) },
                              existing: batch.cases.map(\.outputName))
        for item in batch.cases {
            let earlier = sandbox.outbox.appendingPathComponent(item.outputName)
            try expectEqual(Data(contentsOf: earlier.appendingPathComponent("memo.json")), Data("earlier result".utf8), "\(item.file)")
            try expectEqual(sandbox.listing(earlier), ["memo.json"], "\(item.file)")
            guard let event = run.events[item.file] else { continue }
            try expectSample(item, event, run)
        }
    }

    /// One sample's verdict: its rendered memo or memos under a new name, or its quarantine entry.
    private func expectSample(_ item: KeyedCase, _ event: Event, _ run: DropRun) throws {
        let sandbox = run.sandbox, outputName = item.outputName
        if item.verdict == "accepted" {
            expectEqual(event.kind, .accepted, "\(item.file): \(event)")
            expectEqual(event.output, "outbox/\(outputName)-2", "\(item.file): a new result gets a new name")
            guard event.kind == .accepted else { return }
            let entry = sandbox.outbox.appendingPathComponent(outputName + "-2")
            let expect = try #require(item.expect, "\(item.file)")
            let isArray = expect.memos != nil || expect.memosCount != nil
            let file = isArray ? "memos.json" : "memo.json"
            try expectEqual(sandbox.listing(entry), [file], "\(item.file)")
            let rendered = try JSONDecoder().decode(KeyedCase.Rendered.self, from: Data(contentsOf: entry.appendingPathComponent(file)))
            expectEqual(rendered.format, "airlock-memo", "\(item.file)")
            expectEqual(rendered.version, 1, "\(item.file)")
            if let memo = expect.memo {
                let got = rendered.memo
                expectEqual(got?.schema, memo.schema, "\(item.file)")
                // Scalar for scalar: an NFD text must not come back NFC.
                expectEqual(got?.text.map { Array($0.unicodeScalars) }, memo.text.map { Array($0.unicodeScalars) }, "\(item.file)")
            }
            if let memos = expect.memos {
                let got = rendered.memos ?? []
                expectEqual(got.count, memos.count, "\(item.file)")
                for (a, b) in zip(got, memos) {
                    expectEqual(a.index, b.index, "\(item.file)")
                    expectEqual(a.text.map { Array($0.unicodeScalars) }, b.text.map { Array($0.unicodeScalars) }, "\(item.file)")
                }
            }
            if let count = expect.memosCount {
                expectEqual(rendered.memos?.count, count, "\(item.file)")
            }
        } else {
            expectEqual(event.kind, .rejected, "\(item.file): \(event)")
            expectEqual(event.reason, item.reason, "\(item.file): \(event)")
            let report = try run.quarantined(item.file, event)
            expectEqual(report?.reason, item.reason, "\(item.file)")
            expectEqual(report?.format, "keyed", "\(item.file)")
        }
    }

    @Test("a keyed decoder that crashes ends as decoder-failed")
    func crash() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let original = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/keyed/memo-binary.plist"))
        try sandbox.drop(original, as: "memo.plist")
        let result = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": "abort"])
        expectEqual(result.events.first?.reason, "decoder-failed")
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), original)
    }

    @Test("a keyed archive over the size limit is drop-too-large before any decoding")
    func tooLarge() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        var padded = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/keyed/memo-xml.plist"))
        padded.append(Data(repeating: 0x20, count: (1 << 20) + 1 - padded.count))
        try sandbox.drop(padded, as: "big.plist")
        let result = try sandbox.runOnce()
        expectEqual(result.events.first?.reason, "drop-too-large")
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
        expectEqual(result.events.first?.kind, .accepted, "\(result.stdout) \(result.stderr)")
        let entry = sandbox.outbox.appendingPathComponent("kept")
        try expectEqual(sandbox.listing(entry).sorted(), ["memo.json", "original.plist"])
        try expectEqual(Data(contentsOf: entry.appendingPathComponent("original.plist")), original)
        try sandbox.expectInvariants()
    }
}
