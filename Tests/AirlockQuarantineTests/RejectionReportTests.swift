@testable import AirlockEvents
import AirlockPolicy
@testable import AirlockQuarantine
import AirlockTestSupport
import Foundation
import Testing

/// report.json has one definition: what the intake writes is what the desk,
/// `show` and recovery read, and `release` rewrites it in the same format.
@Suite("report.json: one type written and read back")
struct RejectionReportTests {
    static func report(history: [RejectionReport.HistoryEvent]? = nil) -> RejectionReport {
        var report = RejectionReport(
            id: "20261129T224857Z-db6fab78", drop: "evil \"1\".zip", drop_hex: Array("evil \"1\".zip".utf8).hex, size: 287,
            sha256: String(repeating: "c9", count: 32), uploader_uid: 1001, uploader: "alice", format: "zip",
            reason: "unsafe-path", detail: "'..' path component", entry: "../outside.txt", entry_index: 2, other_entry: nil,
            bytes_written: 0, policy: .init(Policy()), received_at: "2026-11-29T22:48:57.151Z", decided_at: "2026-11-29T22:48:57.236Z",
            airlock_version: AirlockVersion.current)
        report.types = ["a/b.txt": "text/plain", "c\\x01.png": "image/png"]
        report.history = history
        return report
    }

    static let released = [RejectionReport.HistoryEvent(action: "released", at: "2026-11-30T01:00:00.000Z", to: "inbox/evil \"1\".zip")]

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("a report, with or without history, reads back as the value written", arguments: [nil, released])
    func roundTrip(_ history: [RejectionReport.HistoryEvent]?) throws {
        let report = Self.report(history: history)
        let decoded = try RejectionReport.decode(Array(try report.encoded()))
        expectEqual(decoded, report)
        expectEqual(decoded.releasedAt, history?.first?.at)
    }

    @Test("the file's bytes are what the generic JSON writer made of the same fields: indented, sorted, one final newline")
    func bytesUnchanged() throws {
        let data = try Self.report(history: Self.released).encoded()
        let generic = try JSONSerialization.data(withJSONObject: try object(data), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        expectEqual(String(decoding: data, as: UTF8.self), String(decoding: generic + Data("\n".utf8), as: UTF8.self))
    }

    @Test("show --json is the report on one line with holds_drop, keys sorted")
    func shownLine() throws {
        let report = Self.report()
        var fields = try object(try report.encoded())
        fields["holds_drop"] = true
        let generic = try JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
        expectEqual(report.line(holdsDrop: true), String(decoding: generic, as: UTF8.self))
    }

    @Test("a report missing a field it always has, or with one of the wrong type, is refused",
          arguments: ["id", "reason", "policy", "decided_at", "bytes_written", "size:text", "uploader_uid:negative", "history:object"])
    func strict(_ change: String) throws {
        var fields = try object(try Self.report().encoded())
        switch change {
        case "size:text": fields["size"] = "287"
        case "uploader_uid:negative": fields["uploader_uid"] = -1
        case "history:object": fields["history"] = ["action": "released"]
        default: fields[change] = nil
        }
        let bytes = Array(try JSONSerialization.data(withJSONObject: fields))
        #expect(throws: (any Error).self) { try RejectionReport.decode(bytes) }
    }

    @Test("a report from before size took its name gives its size as drop_bytes")
    func legacySize() throws {
        var fields = try object(try Self.report().encoded())
        fields["drop_bytes"] = fields.removeValue(forKey: "size")
        let decoded = try RejectionReport.decode(Array(try JSONSerialization.data(withJSONObject: fields)))
        expect(decoded.size == nil && decoded.dropSize == 287)
    }

    @Test("recovery salvages what a partial report says and ignores what it cannot read")
    func salvage() {
        let partial = RejectionReport.Salvage.read(Array(#"{"id":"x","reason":"unsafe-path","drop_bytes":5,"bytes_written":"3"}"#.utf8))
        expect(partial.reason == "unsafe-path" && partial.size == 5 && partial.bytesWritten == nil && partial.drop == nil)
        let nothing = RejectionReport.Salvage.read(Array("not json".utf8))
        expect(nothing.reason == nil && nothing.size == nil)
        expectEqual(RejectionReport.Salvage.read(nil).detail, nil)
    }
}
