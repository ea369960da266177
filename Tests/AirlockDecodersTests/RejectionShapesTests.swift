@testable import AirlockDecoders
import AirlockEvents
import AirlockPolicy
import AirlockTestSupport
import Testing

/// A rejection crosses the process boundary as one wire message, made from the
/// child's finding and read into the supervisor's rejection, each by one constructor.
@Suite("One rejection: the child's finding, the wire message, the supervisor's rejection")
struct RejectionShapesTests {
    @Test("a child's finding reaches the supervisor's rejection whole: violation, wire message, rejection")
    func violationToRejection() throws {
        var violation = Violation(.pathConflict, "a file and a directory share a name", entry: [0x64, 0xFF, 0x2F, 0x61], index: 3)
        violation.other = [0x64, 0xFF]
        /// Names escaped as every report escapes them.
        func escaped(_ name: [UInt8]) -> String { DropIdentity(id: "", name: name).escapedName }
        let rejected = VerdictMessage.Rejected(violation, entries: 5, bytesWritten: 12)
        expectEqual(rejected, VerdictMessage.Rejected(reason: "path-conflict", detail: violation.detail, entry: escaped(violation.entry!),
                                                    otherEntry: escaped(violation.other!), index: 3, entries: 5, bytesWritten: 12))
        let wire = VerdictMessage(.rejected(rejected)).jsonText
        guard case .success(let read) = VerdictMessage.read(Array(wire.utf8)), case .rejected(let received) = read.outcome else {
            Issue.record("the verdict did not read back: \(wire)")
            return
        }
        let rejection = try #require(Rejection(received))
        expectEqual(rejection.reason, .pathConflict)
        expectEqual(rejection.detail, violation.detail)
        expectEqual(rejection.entry, escaped(violation.entry!))
        expectEqual(rejection.otherEntry, escaped(violation.other!))
        expectEqual(rejection.entryIndex, 3)
        expectEqual(rejection.bytesWritten, 12)
    }

    @Test("a reason no decoder may give makes no rejection of its own", arguments: ["changed-during-ingest", "not-a-reason"])
    func reasonsADecoderMayNotGive(_ reason: String) {
        expectEqual(Rejection(VerdictMessage.Rejected(reason: reason, detail: "x")), nil)
    }
}
