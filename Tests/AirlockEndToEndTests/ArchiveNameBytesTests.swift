import AirlockTestSupport
import Foundation
import Testing

@Suite("tar and 7z entries land under the names the archive holds, byte for byte")
struct ArchiveNameBytesTests {
    /// libarchive hands pax and 7z names back in NFC; String comparison would
    /// hide that (Swift compares canonically), so the bytes are compared.
    @Test("NFD names in a pax tar and in a 7z keep their decomposed bytes in the outbox",
          arguments: ["tar-pax-nfd-names.tar", "7z-nfd-names.7z"])
    func decomposedBytesLand(_ drop: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(try Data(contentsOf: Samples.fixture(drop)), as: drop)
        let result = try sandbox.runOnce()
        expectEqual(result.events.first?.kind, .accepted, "\(result.stdout)")
        let output = sandbox.outbox.appendingPathComponent(String(drop.prefix { $0 != "." }))
        let names = Set(try sandbox.listing(output).map { Array($0.utf8) })
        let expected = ["cafe\u{301}.txt", "Re\u{301}sume\u{301}/", "Re\u{301}sume\u{301}/notes.txt"]
        for name in expected {
            let decomposed = Array(name.utf8)
            expect(decomposed.contains(0xCC), "the expected name is itself NFD")
            expect(names.contains(decomposed), "landed: \(names.map { $0.map { String($0, radix: 16) }.joined(separator: " ") })")
            expect(!names.contains(Array(name.precomposedStringWithCanonicalMapping.utf8)))
        }
        expectEqual(names.count, expected.count)
        try sandbox.expectInvariants()
    }
}
