@testable import AirlockCore
import AirlockPolicy
import Foundation
import Testing

/// A rejection crosses three boundaries with pinned formats (the child's verdict,
/// the journal record, report.json) and each shape is built from the one before
/// by one constructor; the drop's identity is one value every record takes whole.
@Suite("One rejection: each shape from the previous one, the drop's identity carried whole")
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

    @Test("the event line, the claimed and rejected journal records and the report name the same drop")
    func everyRecordTakesTheIdentity() throws {
        let drop = Self.identity
        let escaped = drop.escapedName
        #expect(escaped == #"evil "1"\x01.zip"#)

        let outcome = DropOutcome(drop, verdict: .rejected(Self.rejection), seconds: 0.25)
        #expect(outcome.id == drop.id && outcome.dropName == drop.name && outcome.size == 287 && outcome.sha256 == drop.sha256)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(outcome.eventLine.utf8)) as? [String: Any])
        #expect(event["id"] as? String == drop.id)
        #expect(event["drop"] as? String == escaped)
        #expect(event["size"] as? Int == 287)
        #expect(event["sha256"] as? String == drop.sha256)
        #expect(event["uploader_uid"] as? Int == 0)
        #expect(event["uploader"] as? String == drop.uploader?.name)

        let journalDrop = JournalRecord.Drop(id: drop.id, drop: escaped, size: 287, sha256: drop.sha256)
        #expect(JournalRecord.Drop(drop) == journalDrop)
        #expect(JournalRecord.Claimed(drop) == .init(drop: journalDrop, uploaderUID: 0, uploader: drop.uploader?.name))
        // A deferred outcome made from a decided one keeps the whole identity.
        let deferred = DropOutcome(outcome.drop, verdict: .deferred(detail: "disk full"), seconds: outcome.seconds)
        #expect(deferred.drop == drop)

        let report = RejectionReport(drop, Self.rejection, policy: Policy(), types: [(entry: "docs/a", type: "text/plain")])
        let expected = RejectionReport(
            id: drop.id, drop: escaped, drop_hex: drop.name.hex, size: 287, sha256: drop.sha256, uploader_uid: 0,
            uploader: drop.uploader?.name, format: "zip", reason: "path-conflict", detail: "a file and a directory share a name",
            entry: "docs/a", entry_index: 3, other_entry: "docs", bytes_written: 12, policy: .init(Policy()),
            received_at: "2026-12-01T12:00:00.000Z", decided_at: report.decided_at, airlock_version: AirlockVersion.current,
            types: ["docs/a": "text/plain"])
        #expect(report == expected)
        #expect(try report.encoded() == expected.encoded(), "the same bytes as the report built field by field")
    }

    @Test("a child's finding reaches the supervisor's rejection whole: violation, wire message, rejection")
    func violationToRejection() throws {
        var violation = Violation(.pathConflict, "a file and a directory share a name", entry: [0x64, 0xFF, 0x2F, 0x61], index: 3)
        violation.other = [0x64, 0xFF]
        /// Names escaped as every report escapes them.
        func escaped(_ name: [UInt8]) -> String { DropIdentity(id: "", name: name).escapedName }
        let rejected = VerdictMessage.Rejected(violation, entries: 5, bytesWritten: 12)
        #expect(rejected == VerdictMessage.Rejected(reason: "path-conflict", detail: violation.detail, entry: escaped(violation.entry!),
                                                    otherEntry: escaped(violation.other!), index: 3, entries: 5, bytesWritten: 12))
        let wire = VerdictMessage(.rejected(rejected)).jsonText
        guard case .success(let read) = VerdictMessage.read(Array(wire.utf8)), case .rejected(let received) = read.outcome else {
            Issue.record("the verdict did not read back: \(wire)")
            return
        }
        let rejection = try #require(Rejection(received))
        #expect(rejection.reason == .pathConflict)
        #expect(rejection.detail == violation.detail)
        #expect(rejection.entry == escaped(violation.entry!))
        #expect(rejection.otherEntry == escaped(violation.other!))
        #expect(rejection.entryIndex == 3)
        #expect(rejection.bytesWritten == 12)
    }

    @Test("a reason no decoder may give makes no rejection of its own", arguments: ["changed-during-ingest", "not-a-reason"])
    func reasonsADecoderMayNotGive(_ reason: String) {
        #expect(Rejection(VerdictMessage.Rejected(reason: reason, detail: "x")) == nil)
    }
}
