import AirlockTestSupport
import Foundation
import Testing

/// A decoder child that lies: it writes what the policy forbids into staging and
/// reports success (a debug-only fault, as a subverted decoder would).
struct ForgedStagingCase: CustomTestStringConvertible, Sendable {
    let fault: String
    let policy: [String: Int]
    /// What the supervisor's reason detail must name.
    let detail: String

    var testDescription: String { fault }

    static let all = [
        ForgedStagingCase(fault: "forge-collision", policy: [:], detail: "name-collision"),
        ForgedStagingCase(fault: "forge-control-name", policy: [:], detail: "unsafe-path"),
        ForgedStagingCase(fault: "forge-file-too-large", policy: ["max_file_bytes": 4096], detail: "over the 4096-byte limit"),
        ForgedStagingCase(fault: "forge-entry-count", policy: ["max_entries": 20], detail: "over the 20-entry limit"),
    ]
}

@Suite("The supervisor's audit judges staging by the policy, whatever the decoder says")
struct StagingAuditTests {
    @Test("a decoder that leaves a forbidden tree and reports success is decoder-failed, and nothing is committed",
          arguments: ForgedStagingCase.all)
    func forged(_ item: ForgedStagingCase) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: item.policy)
        let original = Samples.validZip
        try sandbox.drop(original, as: "forged.zip")
        let result = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": item.fault])
        expectEqual(result.status, 0, "\(result.stderr)")
        let event = try #require(result.events.first)
        expectEqual(event.kind, .rejected, "\(event)")
        expectEqual(event.reason, "decoder-failed", "\(event)")
        try sandbox.expectInvariants()
        try expectEqual(sandbox.listing(sandbox.outbox), [], "a forged tree reached the outbox")
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), original)
        let detail = quarantined.report.detail
        expect(detail.contains(item.detail), "\(detail)")
    }

    @Test("1,000 files beneath 1,010 directories no entry names are 1,000 entries for the decoder and the audit alike")
    func impliedDirectories() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(try Data(contentsOf: Samples.fixture("zip-1000-files-1010-implied-dirs.zip")), as: "implied.zip")
        try sandbox.drop(try Data(contentsOf: Samples.fixture("targz-1000-files-1010-implied-dirs.tar.gz")), as: "implied.tar.gz")
        let result = try sandbox.runOnce()
        expectEqual(result.events.count, 2)
        for event in result.events {
            expectEqual(event.kind, .accepted, "\(event)")
            expectEqual(event.files, 1000, "\(event)")
        }
        try sandbox.expectInvariants()
        let listing = try sandbox.listing(sandbox.outbox.appendingPathComponent("implied"))
        expectEqual(listing.filter { $0.hasSuffix("/") }.count, 1010)
        expectEqual(listing.filter { !$0.hasSuffix("/") }.count, 1000)
        expect(listing.contains("d9/s99/f999.txt"))
    }
}
