@testable import AirlockEvents
import AirlockPolicy
import AirlockTestSupport
import Foundation
import Testing

/// What a drop's outcome says on standard output and in the log: the command
/// line's contract, whichever target decided it.
@Suite("Outcome: events and log lines carry the reason code and escaped names")
struct OutcomeLineTests {
    /// One JSON Lines event, parsed.
    private func fields(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("a rejection's event names its reason code, entry and bytes written; one line, no newline")
    func rejectedEvent() throws {
        var rejection = Rejection(.unsafePath, "escapes the root", entry: "../x")
        rejection.bytesWritten = 7
        let outcome = DropOutcome(DropIdentity(id: "0123", name: Array("a\nb.zip".utf8), size: 42, sha256: "ab"),
                                  verdict: .rejected(rejection))
        let line = outcome.eventLine
        expect(!line.contains("\n"))
        let event = try fields(line)
        expect(event["event"] as? String == "rejected")
        expect(event["reason"] as? String == "unsafe-path")
        expect(event["entry"] as? String == "../x")
        expect(event["bytes_written"] as? Int == 7)
        expect(event["size"] as? Int == 42)
        expect(event["sha256"] as? String == "ab")
        expectEqual((event["drop"] as? String)?.contains("\n"), false)
        expect(outcome.logLine.hasPrefix("rejected ") && outcome.logLine.contains("unsafe-path"))
    }

    @Test("an accepted event names its outbox entry and totals; a deferred one its detail")
    func acceptedAndDeferred() throws {
        let accepted = DropOutcome(id: "1", dropName: Array("ok.zip".utf8),
                                   verdict: .accepted(output: Array("ok".utf8), files: 3, bytes: 10))
        let event = try fields(accepted.eventLine)
        expect(event["event"] as? String == "accepted")
        expect(event["output"] as? String == "outbox/ok")
        expect(event["files"] as? Int == 3 && event["bytes"] as? Int == 10)
        let deferred = try fields(DropOutcome(id: "2", dropName: Array("d.zip".utf8), verdict: .deferred(detail: "disk full")).eventLine)
        expect(deferred["event"] as? String == "deferred" && deferred["detail"] as? String == "disk full")
    }

    @Test("hex round-trips every byte; odd lengths and other characters are refused")
    func hexRoundTrip() {
        let bytes = (0...255).map { UInt8($0) }
        expectEqual([UInt8](hex: bytes.hex), bytes)
        expectEqual([UInt8](hex: "0A0b"), [10, 11])
        expectEqual([UInt8](hex: "abc"), nil)
        expectEqual([UInt8](hex: "zz"), nil)
    }
}
