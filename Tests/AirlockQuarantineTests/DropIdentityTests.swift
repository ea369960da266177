import AirlockEvents
import AirlockPolicy
@testable import AirlockQuarantine
import AirlockTestSupport
import Foundation
import Testing

/// A rejection's drop is one value (`DropIdentity`) that every record of it takes
/// whole: the event line, the outcome, report.json (whose bytes stay pinned).
@Suite("One drop identity: the event, the outcome and the report built from it")
struct DropIdentityTests {
    /// A name that needs escaping, an uploader the password database knows, every field set.
    static let identity = DropIdentity(id: "20261201T120000Z-0badc0de", name: Array("evil \"1\"\u{1}.zip".utf8), size: 287,
                                       sha256: String(repeating: "c9", count: 32), uploader: Uploader(uid: 0),
                                       received: "2026-12-01T12:00:00.000Z")

    static let rejection: Rejection = {
        var rejection = Rejection(.pathConflict, "a file and a directory share a name", entry: "docs/a", entryIndex: 3)
        rejection.otherEntry = "docs"
        rejection.bytesWritten = 12
        rejection.format = "zip"
        return rejection
    }()

    @Test("the event line, the outcome and the report name the same drop, and the report's bytes are those of one built field by field")
    func everyRecordTakesTheIdentity() throws {
        let drop = Self.identity
        let escaped = drop.escapedName
        expectEqual(escaped, #"evil "1"\x01.zip"#)

        let outcome = DropOutcome(drop, verdict: .rejected(Self.rejection), seconds: 0.25)
        expect(outcome.id == drop.id && outcome.dropName == drop.name && outcome.size == 287 && outcome.sha256 == drop.sha256)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(outcome.eventLine.utf8)) as? [String: Any])
        expect(event["id"] as? String == drop.id)
        expect(event["drop"] as? String == escaped)
        expect(event["size"] as? Int == 287)
        expect(event["sha256"] as? String == drop.sha256)
        expect(event["uploader_uid"] as? Int == 0)
        expect(event["uploader"] as? String == drop.uploader?.name)

        // A deferred outcome made from a decided one keeps the whole identity.
        let deferred = DropOutcome(outcome.drop, verdict: .deferred(detail: "disk full"), seconds: outcome.seconds)
        expectEqual(deferred.drop, drop)

        let report = RejectionReport(drop, Self.rejection, policy: Policy(), types: [(entry: "docs/a", type: "text/plain")])
        let expected = RejectionReport(
            id: drop.id, drop: escaped, drop_hex: drop.name.hex, size: 287, sha256: drop.sha256, uploader_uid: 0,
            uploader: drop.uploader?.name, format: "zip", reason: "path-conflict", detail: "a file and a directory share a name",
            entry: "docs/a", entry_index: 3, other_entry: "docs", bytes_written: 12, policy: .init(Policy()),
            received_at: "2026-12-01T12:00:00.000Z", decided_at: report.decided_at, airlock_version: AirlockVersion.current,
            types: ["docs/a": "text/plain"])
        expectEqual(report, expected)
        try expectEqual(report.encoded(), expected.encoded(), "the same bytes as the report built field by field")
    }
}
