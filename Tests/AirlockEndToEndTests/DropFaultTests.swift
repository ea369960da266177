import AirlockTestSupport
import Foundation
import Testing

@Suite("Disk faults while reading a drop defer it; they are never a verdict on its bytes")
struct DropFaultTests {
    /// One drop per reader of the drop in the decoder child: airlock's ZIP
    /// directory parser, libarchive through the drop source, the plain tar and
    /// gzip sources, libarchive's decompression filters, airlock's 7z header
    /// reader, and the keyed decoder's read.
    static let drops = ["zip-deflate-valid.zip", "tar-gnu-valid.tar", "targz-tgz-valid.tgz", "tarzst-valid.tar.zst",
                        "tarxz-multistream.tar.xz", "7z-valid.7z"]

    @Test("an EIO from every read of the drop leaves each drop claimed, unjudged, and a later run accepts them")
    func eioDefers() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        for name in DropFaultTests.drops {
            try sandbox.drop(try Data(contentsOf: Samples.fixture(name)), as: name)
        }
        try sandbox.drop(try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/keyed/memo-binary.plist")),
                         as: "memo.plist")
        let faulty = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": "drop-eio"])
        expectEqual(faulty.events.count, DropFaultTests.drops.count + 1, "\(faulty.stdout)")
        for event in faulty.events {
            expectEqual(event.kind, .deferred, "\(event)")
            expectEqual(event.detail?.contains("EIO"), true, "\(event)")
        }
        try sandbox.expectOnlyClaimed(DropFaultTests.drops.count + 1)

        let healthy = try sandbox.runOnce()
        expectEqual(healthy.status, 0, "\(healthy.stderr)")
        let verdicts = healthy.events.filter { $0.kind != .deferred }
        expectEqual(verdicts.count, DropFaultTests.drops.count + 1, "\(healthy.stdout)")
        expect(verdicts.allSatisfy { $0.kind == .accepted }, "\(healthy.stdout)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, DropFaultTests.drops.count + 1)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), [])
        try sandbox.expectInvariants()
    }
}

@Suite("macOS ZIPs land under the names the archive holds, byte for byte")
struct MacZipNameTests {
    /// libarchive normalises names flagged UTF-8 to NFC; String comparison would
    /// hide that (Swift compares canonically), so the bytes are compared.
    @Test("NFD names, with and without the UTF-8 flag, keep their decomposed bytes in the outbox",
          arguments: [("zip-macos-nfd-utf8.zip", "cafe\u{301}.txt"), ("zip-macos-finder.zip", "Photos/cafe\u{301}.txt")])
    func decomposedBytesLand(_ drop: String, _ expected: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(try Data(contentsOf: Samples.fixture(drop)), as: drop)
        let result = try sandbox.runOnce()
        expectEqual(result.events.first?.kind, .accepted, "\(result.stdout)")
        let output = sandbox.outbox.appendingPathComponent(String(drop.dropLast(4)))
        let names = try sandbox.listing(output).map { Array($0.utf8) }
        let decomposed = Array(expected.utf8)
        expect(decomposed.contains(0xCC), "the expected name is itself NFD")
        expect(names.contains(decomposed), "landed: \(names.map { String(decoding: $0, as: UTF8.self).unicodeScalars.map { String($0.value, radix: 16) } })")
        expect(!names.contains(Array(expected.precomposedStringWithCanonicalMapping.utf8)))
        try sandbox.expectInvariants()
    }
}
