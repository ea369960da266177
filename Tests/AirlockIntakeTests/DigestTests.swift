@testable import AirlockIntake
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("Digest: SHA-256 of a staged file, in lower-case hex")
struct DigestTests {
    @Test("hex: two lower-case digits a byte, leading zeros kept")
    func hex() {
        expectEqual(Digest.hex([]), "")
        expectEqual(Digest.hex([0x00, 0x0F, 0xA5, 0xFF, 0x10]), "000fa5ff10")
    }

    @Test("the FIPS 180-2 vectors: \"abc\" and the empty file")
    func knownVectors() throws {
        let scratch = try Scratch("digest")
        for (content, expected) in [("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
                                    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")] {
            let path = scratch.path + "/file-\(content.count)"
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            let file = try FileDescriptor.open(path: path, [.readOnly])
            defer { file.close() }
            try expectEqual(Digest.sha256(of: file, limit: 1 << 20), expected)
        }
    }
}
