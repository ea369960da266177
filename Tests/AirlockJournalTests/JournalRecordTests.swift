@testable import AirlockJournal
import AirlockPolicy
import AirlockTestSupport
import Foundation
import Testing

/// Each journal record kind is written and read through one list of fields.
@Suite("Journal records: one type per kind, written and read back")
struct JournalRecordTests {
    static let drop = JournalRecord.Drop(id: "20261129T224857Z-63a6c589", drop: "good \"1\".zip", size: 4311, sha256: "ad21")

    static let records: [JournalRecord] = [
        .claimed(.init(drop: drop, uploaderUID: 1001, uploader: "alice")),
        .claimed(.init(drop: .init(id: "20261129T224857Z-63a6c589", drop: "x"))),
        .accepted(.init(drop: drop, output: "outbox/good", files: 5, bytes: 4672,
                        types: [DetectedType(entry: "a.txt", type: "text/plain"), DetectedType(entry: "b.png", type: "image/png")],
                        measures: .init(durationMilliseconds: 69, decoderMaxRSSKiB: 2048))),
        .accepted(.init(drop: .init(id: "20261129T224857Z-63a6c589", drop: "x"), output: "outbox/x", measures: .init(recovered: true))),
        .rejected(.init(drop: drop, reason: "unsafe-path", entry: "../outside.txt", bytesWritten: 0,
                        measures: .init(durationMilliseconds: 85))),
        .rejected(.init(drop: drop, reason: "zip-bomb", bytesWritten: 12, measures: .init(recovered: true))),
        .deferred(.init(drop: drop, detail: "writing to staging failed", measures: .init(durationMilliseconds: 3))),
        .skipped(.init(drop: "fifo", dropHex: "6669666f", device: 2049, inode: -5, changed: "1.5", detail: "cannot be moved")),
        .released(.init(id: "20261129T224857Z-63a6c589", drop: "evil.zip", to: "inbox/evil.zip", sha256: "c9", size: 287)),
        .purged(.init(id: "20261129T224857Z-63a6c589", drop: "evil.zip", reason: "unsafe-path", size: 287, purgeReason: "reviewed")),
        .purged(.init(id: "20261129T224857Z-63a6c589", drop: "", reason: "")),
    ]

    @Test("every kind reads back as the value written", arguments: records)
    func roundTrip(_ record: JournalRecord) {
        let entry = JournalEntry(time: "2026-11-29T22:48:57.236Z", record: record)
        expectEqual(JournalEntry.read(Array(entry.line.utf8)), entry)
    }

    @Test("lines keep the journal's field order: time, event, the drop, the verdict, the measures")
    func pinnedLines() {
        let rejected = JournalEntry(time: "T", record: Self.records[4]).line
        expectEqual(rejected, #"{"time":"T","event":"rejected","id":"20261129T224857Z-63a6c589","drop":"good \"1\".zip","size":4311,"#
            + #""sha256":"ad21","reason":"unsafe-path","entry":"../outside.txt","bytes_written":0,"duration_ms":85}"#)
        let released = JournalEntry(time: "T", record: Self.records[8]).line
        expectEqual(released, #"{"time":"T","event":"released","id":"20261129T224857Z-63a6c589","drop":"evil.zip","#
            + #""to":"inbox/evil.zip","sha256":"c9","size":287}"#)
        let claimed = JournalEntry(time: "T", record: Self.records[0]).line
        expect(claimed.hasSuffix(#""sha256":"ad21","uploader_uid":1001,"uploader":"alice"}"#))
    }

    @Test("history --json is the record with its keys sorted, as the generic JSON writer sorts them", arguments: records)
    func sortedLine(_ record: JournalRecord) throws {
        let entry = JournalEntry(time: "2026-11-29T22:48:57.236Z", record: record)
        let object = try JSONSerialization.jsonObject(with: Data(entry.line.utf8))
        let generic = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        expectEqual(entry.sortedLine, String(decoding: generic, as: UTF8.self))
    }

    @Test("a line of an unknown kind, without its time, or with a field missing or ill-typed is no record",
          arguments: [
            #"{"time":"T","event":"exploded","id":"x","drop":"y"}"#,
            #"{"event":"claimed","id":"x","drop":"y"}"#,
            #"{"time":"T","event":"rejected","id":"x","drop":"y","reason":"unsafe-path"}"#,
            #"{"time":"T","event":"rejected","id":"x","drop":"y","reason":"unsafe-path","bytes_written":"0"}"#,
            #"{"time":"T","event":"accepted","id":"x","drop":"y","output":"outbox/y","recovered":1}"#,
            #"{"time":"T","event":"skipped","drop":"y","drop_hex":"79","device":1,"inode":2,"changed":"1.0"}"#,
            #"{"time":"T","event":"claimed","id":"x","drop":"y","uploader_uid":-1}"#,
            #"{"time":"T","event":"claimed","id":"x","drop":"y""#,
          ])
    func refused(_ line: String) {
        expectEqual(JournalEntry.read(Array(line.utf8)), nil)
    }

    @Test("the id a record is looked up by; a skipped entry has none")
    func ids() {
        // Split out of the macro: as one expression it took a second to type-check.
        let idless: [JournalRecord] = Self.records.filter { $0.id == nil }
        expectEqual(idless.count, 1)
        expect(Self.records[7].id == nil && Self.records[7].event == "skipped")
    }
}
