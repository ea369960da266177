import AirlockChild
@testable import AirlockDecoders
@testable import AirlockEvents
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

/// The decoder child's verdict crosses a process boundary: what the child
/// encodes must be what the supervisor decodes, and anything else is refused.
@Suite("The verdict message: one encoder, one decoder, versioned and strict")
struct VerdictMessageTests {
    static let confinement = VerdictMessage.ConfinementFields(landlockABI: 4, landlockState: "in-force", seccompState: "refused",
                                                              problems: "seccomp: EPERM")

    static let messages: [VerdictMessage] = [
        VerdictMessage(.accepted(.init(files: 3, directories: 1, entries: 4, bytesWritten: 1234)),
                       types: [DetectedType(entry: "a.txt", type: "text/plain"), DetectedType(entry: "b\\x01.png", type: "image/png")],
                       classes: [ClassifiedEntry(entry: "run.sh", classes: [.script, .executable])],
                       confinement: confinement),
        VerdictMessage(.accepted(.init(files: 0, directories: 0, entries: 0, bytesWritten: 0))),
        VerdictMessage(.rejected(.init(reason: "unsafe-path", detail: "'..' path component", entry: "../x", otherEntry: "y \"q\"",
                                       index: 7, entries: 8, bytesWritten: 99)),
                       confinement: VerdictMessage.ConfinementFields(landlockABI: 0, landlockState: "not-offered",
                                                                     seccompState: "in-force", problems: nil)),
        VerdictMessage(.rejected(.init(reason: "file-too-large", detail: "the kernel refused a write"))),
        VerdictMessage(.failed(.init(stage: "reading-drop", errno: 5, detail: "pread: EIO"))),
        VerdictMessage(.failed(.init(stage: "writing-staging", errno: 28, detail: "write \"a\": ENOSPC", bytesWritten: 65536))),
        VerdictMessage(.unconfined(detail: "landlock: refused\nby the service manager"), confinement: confinement),
        VerdictMessage(.unavailable(detail: "cannot load /usr/share/misc/magic.mgc")),
        VerdictMessage(.probe(.init(confineMicroseconds: 812, addressSpaceBytes: 1 << 31, cpuSeconds: 30, openFiles: 64,
                                    fileSizeBytes: Int64.max, confinement: "required")), confinement: confinement),
        VerdictMessage(.listing(.init(headers: .init(entries: [
            ListedEntry(entry: "dir", entryType: "directory"),
            ListedEntry(entry: "dir/a", entryType: "file", entrySize: 12, encrypted: true),
            ListedEntry(entry: "l", entryType: "symlink", linkTarget: "/etc/passwd"),
        ], count: 5, truncated: true), detail: "an unreadable header"))),
        VerdictMessage(.listing(.init(headers: nil, detail: "not a zip archive"))),
    ]

    private static func decode(_ text: String) throws -> VerdictMessage {
        try JSONDecoder().decode(VerdictMessage.self, from: Data(text.utf8))
    }

    /// The supervisor's reading of raw child output.
    private static func interpret(_ text: String) -> DecoderVerdict {
        // A child that said it took its drop: only such a child's verdict is believed.
        DecoderVerdict.interpret(DecoderProcess.Run(termination: .exited(0), output: Array(text.utf8), timedOut: false,
                                                    taken: VerdictMessage.currentVersion), timeoutSeconds: 10)
    }

    /// A JSON object from fields in order, each value already JSON.
    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { JSONObjectWriter.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    static let acceptedFields: [(String, String)] = [
        ("version", "3"), ("verdict", "\"accepted\""), ("files", "2"), ("directories", "0"), ("entries", "2"), ("bytes_written", "10"),
    ]

    @Test("every kind of verdict decodes to the value that was encoded", arguments: messages)
    func roundTrip(_ message: VerdictMessage) throws {
        try expectEqual(Self.decode(message.jsonText), message)
    }

    @Test("the encoding is pinned: version first, the fields in the order the supervisor has always been sent them")
    func pinnedBytes() {
        expectEqual(Self.messages[0].jsonText, #"{"version":3,"types":{"a.txt":"text/plain","b\\x01.png":"image/png"},"#
            + #""classes":{"run.sh":"executable script"},"#
            + #""verdict":"accepted","files":3,"directories":1,"entries":4,"bytes_written":1234,"#
            + #""landlock_abi":4,"landlock":1,"seccomp":0,"landlock_state":"in-force","seccomp_state":"refused","#
            + #""confinement_problems":"seccomp: EPERM"}"#)
        expectEqual(Self.messages[3].jsonText, #"{"version":3,"verdict":"rejected","reason":"file-too-large","detail":"the kernel refused a write"}"#)
        expectEqual(ListedEntry(entry: "a", entryType: "file", entrySize: 1, linkTarget: "b", encrypted: true).jsonText, #"{"encrypted":true,"entry":"a","entry_size":1,"entry_type":"file","link_target":"b"}"#)
    }

    @Test("accepted and rejected verdicts reach the supervisor with their counts, reason and entries")
    func interpreted() {
        expectEqual(Self.interpret(Self.messages[0].jsonText), .accepted(files: 3, bytes: 1234))
        guard case .rejected(let rejection) = Self.interpret(Self.messages[2].jsonText) else {
            Issue.record("expected a rejection")
            return
        }
        expect(rejection.reason == .unsafePath && rejection.detail == "'..' path component")
        expect(rejection.entry == "../x" && rejection.otherEntry == "y \"q\"" && rejection.entryIndex == 7 && rejection.bytesWritten == 99)
        expectEqual(Self.interpret(Self.messages[7].jsonText), .deferred("cannot load /usr/share/misc/magic.mgc"))
    }

    @Test("a verdict of another version is refused and defers the drop: the decoder on disk is of another build",
          arguments: ["0", "1", "2", "4", "-1", "9000"])
    func unknownVersion(_ version: String) throws {
        var fields = Self.acceptedFields
        fields[0].1 = version
        let text = Self.object(fields)
        #expect(throws: VerdictMessage.Refusal.unknownVersion(Int64(version)!)) { try Self.decode(text) }
        guard case .deferred(let detail) = Self.interpret(text) else {
            Issue.record("a verdict of version \(version) was taken as a verdict")
            return
        }
        expect(detail.contains("speaks another version"), "\(detail)")
    }

    @Test("a child that never said it took its drop gives no verdict, whatever it wrote or however it ended",
          arguments: [Termination.exited(0), .exited(75), .exited(64), .signalled(9)])
    func notTakenDefers(_ termination: Termination) {
        let run = DecoderProcess.Run(termination: termination, output: Array(Self.messages[2].jsonText.utf8), timedOut: false)
        guard case .deferred(let detail) = DecoderVerdict.interpret(run, timeoutSeconds: 10) else {
            Issue.record("a child that never took its drop gave a verdict")
            return
        }
        expect(detail.contains("before it took the drop"), "\(detail)")
        let refused = DecoderProcess.Run(termination: .exited(DecoderRequest.refusedStatus), output: [], timedOut: false)
        expect(refused.speaksAnotherVersion)
        let takenOther = DecoderProcess.Run(termination: .exited(0), output: [], timedOut: false, taken: VerdictMessage.currentVersion + 1)
        expect(takenOther.speaksAnotherVersion)
    }

    @Test("a verdict without a version, or with one that is not an integer, is unreadable",
          arguments: [nil, "\"3\"", "3.5", "true", "null"])
    func malformedVersion(_ version: String?) {
        var fields = Array(Self.acceptedFields.dropFirst())
        if let version { fields.insert(("version", version), at: 0) }
        expectEqual(Self.interpret(Self.object(fields)), .rejected(Rejection(.decoderFailed, "the decoder exited without a readable verdict")))
    }

    @Test("classes that are not content classes make the verdict unreadable", arguments: ["\"program\"", "\"script script\"", "\"\"", "[\"script\"]"])
    func unknownClasses(_ value: String) {
        var fields = Self.acceptedFields
        fields.insert(("classes", "{\"a\":" + value + "}"), at: 1)
        expectEqual(Self.interpret(Self.object(fields)), .rejected(Rejection(.decoderFailed, "the decoder exited without a readable verdict")))
    }

    @Test("an unknown verdict kind is refused by name")
    func unknownVerdict() {
        var fields = Self.acceptedFields
        fields[1].1 = "\"maybe\""
        expectEqual(Self.interpret(Self.object(fields)), .rejected(Rejection(.decoderFailed, "the decoder gave an unknown verdict \"maybe\"")))
    }

    @Test("an accepted verdict missing any of its fields is unreadable", arguments: 1..<acceptedFields.count)
    func missingField(_ index: Int) {
        var fields = Self.acceptedFields
        fields.remove(at: index)
        expectEqual(Self.interpret(Self.object(fields)), .rejected(Rejection(.decoderFailed, "the decoder exited without a readable verdict")))
    }

    @Test("a field of the wrong type is unreadable, however plausible its text",
          arguments: [
            [("verdict", "\"accepted\""), ("files", "\"2\""), ("directories", "0"), ("entries", "2"), ("bytes_written", "10")],
            [("verdict", "\"accepted\""), ("files", "2.5"), ("directories", "0"), ("entries", "2"), ("bytes_written", "10")],
            [("verdict", "\"accepted\""), ("files", "2"), ("directories", "0"), ("entries", "2"), ("bytes_written", "1e40")],
            [("verdict", "\"rejected\""), ("reason", "\"unsafe-path\""), ("detail", "5")],
            [("verdict", "\"rejected\""), ("reason", "\"unsafe-path\""), ("detail", "\"x\""), ("index", "\"3\"")],
            [("verdict", "\"error\""), ("stage", "\"writing-staging\""), ("errno", "4294967296"), ("detail", "\"x\"")],
            [("verdict", "\"unconfined\"")],
            [("verdict", "\"listing\""), ("entries", "[{\"entry\":\"a\"}]"), ("entry_count", "1"), ("truncated", "false")],
            [("verdict", "\"listing\""), ("entries", "[]"), ("entry_count", "0"), ("truncated", "0")],
            [("verdict", "\"accepted\""), ("files", "2"), ("directories", "0"), ("entries", "2"), ("bytes_written", "10"),
             ("landlock_abi", "4"), ("landlock", "true"), ("seccomp", "1"), ("landlock_state", "\"in-force\""),
             ("seccomp_state", "\"in-force\"")],
          ])
    func illTyped(_ fields: [(String, String)]) {
        let text = Self.object([("version", "3")] + fields)
        #expect(throws: (any Error).self) { try Self.decode(text) }
        expectEqual(Self.interpret(text), .rejected(Rejection(.decoderFailed, "the decoder exited without a readable verdict")))
    }

    @Test("what is not a JSON object at all is unreadable", arguments: ["", "[]", "1", "{\"version\":3", "{\"version\":3}{}"])
    func notAnObject(_ text: String) {
        expectEqual(Self.interpret(text), .rejected(Rejection(.decoderFailed, "the decoder exited without a readable verdict")))
    }

    @Test("a probe or a listing is no verdict on a drop")
    func notADropVerdict() {
        for message in Self.messages[8...] {
            expectEqual(Self.interpret(message.jsonText), .rejected(Rejection(.decoderFailed, "the decoder gave an unknown verdict")))
        }
    }

    @Test("a rejection with a reason no decoder may give is refused")
    func foreignReason() {
        let text = VerdictMessage(.rejected(.init(reason: "malware-found", detail: "x"))).jsonText
        expectEqual(Self.interpret(text), .rejected(Rejection(.decoderFailed, "the decoder gave an unknown reason")))
    }
}
