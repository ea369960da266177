@testable import AirlockConfiguration
@testable import AirlockJournal
import AirlockTestSupport
import Foundation
import Testing

@Suite("publish.nats: the settings, the subject token, the progress file and which records are published")
struct PublishSettingsTests {
    func settings(_ fields: String) throws(ConfigurationError) -> PublishSettings? {
        try Configuration(json: Data(#"{"publish": {"nats": {\#(fields)}}}"#.utf8)).publish
    }

    @Test("no publish section: nothing is published")
    func absent() {
        expectEqual(Configuration().publish, nil)
    }

    @Test("servers and stream are required; the defaults fill the rest")
    func required() throws {
        #expect(throws: ConfigurationError.self) { try settings(#""stream": "S""#) }
        #expect(throws: ConfigurationError.self) { try settings(#""servers": ["nats://h:4222"]"#) }
        let parsed = try #require(try settings(#""servers": ["nats://h:4222", "tls://k:4443"], "stream": "S""#))
        expect(parsed.subjectPrefix == "airlock" && parsed.duplicateWindowSeconds == 7200 && !parsed.createStream)
    }

    @Test("bad values are refused with the key", arguments: [
        (#""servers": ["http://h:1"], "stream": "S""#, "publish.nats.servers"),
        (#""servers": ["nats://h"], "stream": "S""#, "publish.nats.servers"),
        (#""servers": ["nats://u:p@h:1"], "stream": "S""#, "publish.nats.servers"),
        (#""servers": ["nats://h:1"], "stream": "a.b""#, "publish.nats.stream"),
        (#""servers": ["nats://h:1"], "stream": "S", "subject_prefix": "a.*""#, "publish.nats.subject_prefix"),
        (#""servers": ["nats://h:1"], "stream": "S", "subject_prefix": "a..b""#, "publish.nats.subject_prefix"),
        (#""servers": ["nats://h:1"], "stream": "S", "tls_ca_file": "ca.pem""#, "publish.nats.tls_ca_file"),
        (#""servers": ["nats://h:1"], "stream": "S", "tls_cert_file": "/c.pem""#, "publish.nats.tls_cert_file"),
        (#""servers": ["nats://h:1"], "stream": "S", "creds_file": "/a", "user_password_file": "/b""#, "publish.nats.creds_file"),
        (#""servers": ["nats://h:1"], "stream": "S", "colour": 1"#, "publish.nats.colour"),
    ])
    func refused(_ fields: String, _ key: String) {
        do {
            _ = try settings(fields)
            Issue.record("accepted: \(fields)")
        } catch {
            expect(error.message.hasPrefix(key), "\(error.message)")
        }
    }

    @Test("an instance name becomes one token: NATS's special characters, %, whitespace and non-ASCII escaped, injectively",
          arguments: [("db1.example.org", "db1%2Eexample%2Eorg"), ("a*b>c", "a%2Ab%3Ec"), ("a b\tc", "a%20b%09c"),
                      ("50%", "50%25"), ("h\u{00E9}te", "h%C3%A9te"), ("plain-name_1", "plain-name_1")])
    func token(_ name: String, _ token: String) {
        expectEqual(InstanceToken.encode(name), token)
        expect(!token.contains(".") && !token.contains("*") && !token.contains(">") && !token.contains(" "))
    }

    @Test("without an instance name, the kernel's host name (no resolver lookup) is the instance")
    func hostName() throws {
        let kernel = try String(contentsOfFile: "/proc/sys/kernel/hostname", encoding: .utf8).trimmingCharacters(in: .newlines)
        expectEqual(PublishSettings().instanceName, kernel)
        expectEqual(PublishSettings().subject(event: "accepted"), "airlock." + InstanceToken.encode(kernel) + ".accepted")
    }

    @Test("subjects are PREFIX.INSTANCE.EVENT and the message id is ID:EVENT")
    func subjects() {
        var settings = PublishSettings()
        settings.instance = "x.y"
        settings.subjectPrefix = "corp.airlock"
        expectEqual(settings.subject(event: "accepted"), "corp.airlock.x%2Ey.accepted")
        expectEqual(PublishSettings.messageID(id: "20261201T120000Z-0a1b2c3d", event: "rejected"), "20261201T120000Z-0a1b2c3d:rejected")
    }

    @Test("the progress file decodes what it encodes, and refuses another version")
    func progressRoundTrip() throws {
        var progress = PublishProgress()
        progress.cursor = EventFeed.Cursor("12:3:456")
        progress.published = 7
        progress.failures = 2
        progress.lastError = "connecting to nats://h:1: \"refused\""
        progress.updated = "2026-12-01T12:00:00.000Z"
        expectEqual(PublishProgress(decoding: progress.encoded), progress)
        expectEqual(String(decoding: progress.encoded, as: UTF8.self), #"{"version":1,"cursor":"12:3:456","published":7,"failures":2,"last_error":"connecting to nats://h:1: \"refused\"","updated":"2026-12-01T12:00:00.000Z"}"# + "\n")
        expectEqual(PublishProgress(decoding: Array(#"{"version":2,"published":0,"failures":0,"last_error":"","updated":""}"#.utf8)), nil)
    }

    @Test("cursors order by generation, then offset within one file; files from before generations do not order")
    func cursorOrder() throws {
        let a = try #require(EventFeed.Cursor("10:1:500")), b = try #require(EventFeed.Cursor("11:2:10"))
        expect(b.isAfter(a) == true && a.isAfter(b) == false)
        try expectEqual(#require(EventFeed.Cursor("10:1:600")).isAfter(a), true)
        try expectEqual(#require(EventFeed.Cursor("10:500")).isAfter(b), nil)
    }

    func item(_ record: JournalRecord) -> EventFeed.Item {
        EventFeed.Item(line: "{}", cursor: EventFeed.Cursor(inode: 1, generation: 1, offset: 1), record: record)
    }

    @Test("claimed and skipped records are not published; a drop deferred again and again is published deferred once")
    func plan() {
        var settings = PublishSettings()
        settings.instance = "h"
        var plan = PublishPlan(settings: settings)
        let drop = JournalRecord.Drop(id: "D1", drop: "a.zip")
        expectEqual(plan.message(for: item(.claimed(.init(drop: drop)))), nil)
        let first = plan.message(for: item(.deferred(.init(drop: drop, detail: "disk full"))))
        expect(first?.subject == "airlock.h.deferred" && first?.messageID == "D1:deferred")
        expectEqual(plan.message(for: item(.deferred(.init(drop: drop, detail: "disk full")))), nil)
        let verdict = plan.message(for: item(.accepted(.init(drop: drop, output: "outbox/a"))))
        expect(verdict?.messageID == "D1:accepted" && verdict?.payload == "{}")
        // Deferred before the starting point: not reported again after a restart.
        var restarted = PublishPlan(settings: settings)
        restarted.skip(.deferred(.init(drop: JournalRecord.Drop(id: "D2", drop: "b.zip"), detail: "x")))
        expectEqual(restarted.message(for: item(.deferred(.init(drop: JournalRecord.Drop(id: "D2", drop: "b.zip"), detail: "x")))), nil)
    }
}
