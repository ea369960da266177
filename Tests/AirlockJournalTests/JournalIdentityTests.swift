import AirlockEvents
@testable import AirlockJournal
import AirlockTestSupport
import Foundation
import Testing

/// The journal's records of a drop take its identity whole, by one constructor.
@Suite("Journal records from a drop's identity")
struct JournalIdentityTests {
    static let identity = DropIdentity(id: "20261201T120000Z-0badc0de", name: Array("evil \"1\"\u{1}.zip".utf8), size: 287,
                                       sha256: String(repeating: "c9", count: 32), uploader: Uploader(uid: 0),
                                       received: "2026-12-01T12:00:00.000Z")

    @Test("the verdict records' drop and the claimed record carry the identity's id, escaped name, size, hash and uploader")
    func recordsTakeTheIdentity() {
        let drop = Self.identity
        let escaped = drop.escapedName
        let journalDrop = JournalRecord.Drop(id: drop.id, drop: escaped, size: 287, sha256: drop.sha256)
        expectEqual(JournalRecord.Drop(drop), journalDrop)
        expectEqual(JournalRecord.Claimed(drop), .init(drop: journalDrop, uploaderUID: 0, uploader: drop.uploader?.name))
        let unknown = DropIdentity(id: drop.id, name: drop.name)
        expectEqual(JournalRecord.Claimed(unknown), .init(drop: .init(id: drop.id, drop: escaped), uploaderUID: nil, uploader: nil))
    }
}
