@testable import AirlockIntake
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

/// A claim whose rename reported ENOENT: a lost race (nothing in the claim) is
/// given up and its directory removed; a rename that happened although ENOENT was
/// reported (an NFS client retrying a rename whose reply was lost) is kept.
@Suite("Claim: after a rename reported ENOENT, the claim's own directory decides")
struct ClaimRenameTests {
    @Test("an empty claim directory is a lost race: removed, and the rename did not happen")
    func lostRace() throws {
        let parent = try StagingDirectoryTests.Parent()
        try FileManager.default.createDirectory(atPath: parent.path + "/20261201T000000Z-0000abcd", withIntermediateDirectories: false)
        expectEqual(Claim.renameHappened("20261201T000000Z-0000abcd", in: parent.descriptor), false)
        expectEqual(parent.entries, [])
    }

    @Test("a claim directory holding the drop is a rename that happened: kept whole")
    func renameHappened() throws {
        let parent = try StagingDirectoryTests.Parent()
        let claim = parent.path + "/20261201T000000Z-0000abcd"
        try FileManager.default.createDirectory(atPath: claim, withIntermediateDirectories: false)
        try Data("drop bytes".utf8).write(to: URL(fileURLWithPath: claim + "/drop"))
        expectEqual(Claim.renameHappened("20261201T000000Z-0000abcd", in: parent.descriptor), true)
        expectEqual(parent.entries, ["20261201T000000Z-0000abcd"])
        try expectEqual(Data(contentsOf: URL(fileURLWithPath: claim + "/drop")), Data("drop bytes".utf8))
    }

    @Test("a name that vanished before its rename gives no claim and leaves no claim directory")
    func vanishedName() throws {
        let inbox = try StagingDirectoryTests.Parent(), claimed = try StagingDirectoryTests.Parent()
        try expectEqual(Claim.take(Array("gone.zip".utf8), from: inbox.descriptor, into: claimed.descriptor), nil)
        expect(claimed.entries == [] && claimed.openBeneath == [])
    }
}
