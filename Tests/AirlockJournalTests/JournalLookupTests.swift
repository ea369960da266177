@testable import AirlockJournal
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The journal's look-and-append, on which recovery's "at most one record" rests.
@Suite("Journal: a record appended once per id, found wherever it lies")
struct JournalLookupTests {
    /// A fresh directory for one journal; removed afterwards.
    final class StateDirectory {
        /// Holds `path`, removed when the last reference goes.
        private let scratch: Scratch
        let path: String
        let descriptor: FileDescriptor

        init() throws {
            scratch = try Scratch("journal")
            path = scratch.path
            descriptor = try FileDescriptor.openDirectory(path: path)
        }

        // The scratch directory goes after this, with the last reference to it.
        deinit { descriptor.close() }

        func appendRaw(_ bytes: [UInt8]) throws {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "/journal.jsonl"))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(bytes))
        }
    }

    private func rejected(_ journal: Journal, _ id: String) throws -> Bool {
        try journal.appendOnce(.rejected(.init(drop: .init(id: id, drop: "x.zip"), reason: "unsafe-path", bytesWritten: 0)),
                               unless: ["accepted", "rejected"])
    }

    @Test("the second appendOnce for an id writes nothing; another id is not confused with it")
    func once() throws {
        let state = try StateDirectory()
        let journal = Journal(state: state.descriptor)
        try expect(rejected(journal, "20261129T000000Z-0000abcd"))
        try expect(!rejected(journal, "20261129T000000Z-0000abcd"))
        // A longer id that starts with the first one is its own.
        try expect(rejected(journal, "20261129T000000Z-0000abcde"))
        try expectEqual(journal.records().count, 2)
        // Another kind of record for the id does not count as a terminal one.
        try journal.append(.claimed(.init(drop: .init(id: "20261129T000000Z-11111111", drop: "x.zip"))))
        try expect(rejected(journal, "20261129T000000Z-11111111"))
        let found = try journal.record(id: "20261129T000000Z-11111111", events: ["rejected"])
        guard case .rejected(let record) = found?.record else {
            Issue.record("expected the rejected record, found \(String(describing: found))")
            return
        }
        expectEqual(record.reason, "unsafe-path")
    }

    @Test("a record in a rotated file is found; one rotated away is not")
    func rotated() throws {
        let state = try StateDirectory()
        // Room for the record and one padded line per file; two old files kept.
        let journal = Journal(state: state.descriptor, maxBytes: 400, keep: 2)
        let id = "20261129T000000Z-aaaaaaaa"
        func pad(_ index: Int) throws {
            try journal.append(.claimed(.init(drop: .init(id: "20261129T000000Z-0000000\(index)", drop: String(repeating: "x", count: 140)))))
        }
        try expect(rejected(journal, id))
        try pad(0)
        try pad(1)
        let first = try String(contentsOfFile: state.path + "/journal.1.jsonl", encoding: .utf8)
        expect(first.contains(id), "the record is in the rotated file")
        try expect(journal.record(id: id, events: ["rejected"]) != nil)
        try expect(!rejected(journal, id))
        try pad(2)
        try pad(3)
        try expect(!journal.records().contains { $0.record.id == id }, "rotated past keep")
        try expectEqual(journal.record(id: id, events: ["rejected"]), nil)
    }

    @Test("a torn line and a zero-filled tail neither count as a record nor hide the ones after them")
    func tornAndZeroed() throws {
        let state = try StateDirectory()
        let journal = Journal(state: state.descriptor)
        try expect(rejected(journal, "20261129T000000Z-00000001"))
        // What a stop mid-append and a power cut can leave: a torn record, then zeros.
        try state.appendRaw(Array(#"{"time":"x","event":"rejected","id":"20261129T000000Z-00000002","rea"#.utf8))
        try state.appendRaw([UInt8](repeating: 0, count: 300))
        try expectEqual(journal.record(id: "20261129T000000Z-00000002", events: ["rejected"]), nil)
        try expect(rejected(journal, "20261129T000000Z-00000002"), "the torn line is not a record")
        try expect(!rejected(journal, "20261129T000000Z-00000002"), "the record after the zeros is found")
        try expect(!rejected(journal, "20261129T000000Z-00000001"))
    }
}
