import AirlockFormats
import AirlockTestSupport
import Foundation
import Testing

/// The fixtures directory of the repository.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("fixtures")

/// What airlock identifies a drop's bytes as, the way the supervisor asks:
/// the first bytes, then (only when they named nothing) the last ones.
func identify(_ bytes: [UInt8]) -> ArchiveFormat? {
    if let format = ArchiveFormat.sniff(Array(bytes.prefix(ArchiveFormat.sniffLength))) { return format }
    return ArchiveFormat.endsLikeZip(Array(bytes.suffix(ArchiveFormat.zipTailLength))) ? .zip : nil
}

func fixtureBytes(_ relative: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: fixtures.appendingPathComponent(relative)))
}

/// The cases of fixtures/archives/manifest.json: each file and the format airlock names it.
struct ArchiveCase: Decodable, CustomTestStringConvertible {
    let file: String
    let format: String
    var testDescription: String { file }

    static let all: [ArchiveCase] = {
        struct Manifest: Decodable { let cases: [ArchiveCase] }
        guard let data = try? Data(contentsOf: fixtures.appendingPathComponent("archives/manifest.json")) else { return [] }
        return (try? JSONDecoder().decode(Manifest.self, from: data).cases) ?? []
    }()
}

@Suite("ArchiveFormat: a drop's format from its bytes alone")
struct FormatIdentificationTests {
    @Test("the corpus is there to identify")
    func corpusPresent() {
        expect(ArchiveCase.all.count > 200)
        expect(Set(ArchiveCase.all.map(\.format)).isSuperset(of: ["zip", "tar", "tar.gz", "tar.bz2", "tar.xz", "tar.zst", "tar.lz",
                                                                  "tar.lzma", "7z", "unknown"]))
    }

    @Test("every archive of the corpus is identified as its manifest says", arguments: ArchiveCase.all)
    func corpus(_ archive: ArchiveCase) throws {
        let found = identify(try fixtureBytes("archives/" + archive.file))
        expectEqual((found?.rawValue ?? "unknown"), archive.format)
    }

    @Test("the optional formats by their magic: RAR 4 and 5, CAB, cpio newc and odc; ISO 9660 by its descriptor")
    func optionalFormats() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent("formats").path).sorted()
        let expected: [(prefix: String, format: ArchiveFormat?)] = [("rar4-", .rar), ("rar5-", .rar), ("cab-", .cab),
                                                                    ("cpio-newc-", .cpio), ("cpio-odc-", .cpio), ("iso-", nil)]
        for (prefix, format) in expected {
            let matching = files.filter { $0.hasPrefix(prefix) }
            expect(matching.count >= 5, "fixtures/formats has too few \(prefix)")
            for file in matching {
                let bytes = try fixtureBytes("formats/" + file)
                expectEqual(ArchiveFormat.sniff(Array(bytes.prefix(ArchiveFormat.sniffLength))), format, "\(file)")
                if prefix == "iso-" {
                    let at = Int(ArchiveFormat.isoDescriptorOffset)
                    expect(ArchiveFormat.isISO9660Descriptor(Array(bytes.dropFirst(at).prefix(7))), "\(file)")
                }
            }
        }
        // newc with checksums ("070702"): libarchive and GNU cpio disagree on a damaged one, so it is not cpio to airlock.
        expectEqual(ArchiveFormat.sniff(try fixtureBytes("formats/cpio-crc-bad-checksum.cpio").prefix(512).map { $0 }), nil)
    }

    @Test("each magic alone names its format, with the shortest prefix that holds it", arguments: [
        ([0x50, 0x4B, 0x03, 0x04], ArchiveFormat.zip),
        ([0x50, 0x4B, 0x05, 0x06], .zip),
        ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], .sevenZip),
        ([0x1F, 0x8B], .tarGzip),
        ([0x42, 0x5A, 0x68, 0x31, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59], .tarBzip2),
        ([0x42, 0x5A, 0x68, 0x39, 0x17, 0x72, 0x45, 0x38, 0x50, 0x90], .tarBzip2),
        ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], .tarXz),
        ([0x28, 0xB5, 0x2F, 0xFD], .tarZstd),
        ([0x4C, 0x5A, 0x49, 0x50, 0x01], .tarLzip),
        ([0x52, 0x61, 0x72, 0x21, 0x1A, 0x07, 0x00], .rar),
        ([0x52, 0x61, 0x72, 0x21, 0x1A, 0x07, 0x01, 0x00], .rar),
        ([0x4D, 0x53, 0x43, 0x46, 0, 0, 0, 0], .cab),
        (Array("070701".utf8), .cpio),
        (Array("070707".utf8), .cpio),
    ] as [([UInt8], ArchiveFormat)])
    func magic(_ magic: [UInt8], _ format: ArchiveFormat) {
        expectEqual(ArchiveFormat.sniff(magic), format)
        expectEqual(ArchiveFormat.sniff(magic + [UInt8](repeating: 0xA5, count: 600)), format, "followed by anything")
        // One byte short, or the last byte changed, is not that format.
        expect(ArchiveFormat.sniff(Array(magic.dropLast())) != format)
        var changed = magic
        changed[changed.count - 1] ^= 0x40
        expect(ArchiveFormat.sniff(changed + [UInt8](repeating: 0xA5, count: 600)) != format)
    }

    @Test("empty, one-byte and short prefixes name nothing, and never trap")
    func shortInputs() {
        expectEqual(ArchiveFormat.sniff([]), nil)
        for length in 0..<ArchiveFormat.sniffLength {
            expectEqual(ArchiveFormat.sniff([UInt8](repeating: 0, count: length)), nil)
            expectEqual(ArchiveFormat.sniff([UInt8](repeating: 0xFF, count: length)), nil)
        }
        expect(!ArchiveFormat.endsLikeZip([]))
        expect(!ArchiveFormat.endsLikeZip([0x50, 0x4B, 0x05, 0x06]))
        expect(!ArchiveFormat.isISO9660Descriptor(Array("\u{1}CD001".utf8)), "a descriptor cut before its version")
    }

    @Test("a tar header is only a tar when the whole 512-byte block is there")
    func truncatedTar() throws {
        let block = Array(try fixtureBytes("archives/tar-ustar-valid.tar").prefix(512))
        expectEqual(ArchiveFormat.sniff(block), .tar)
        expectEqual(ArchiveFormat.sniff(Array(block.prefix(511))), nil)
        let v7 = Array(try fixtureBytes("archives/tar-v7-valid.tar").prefix(512))
        expectEqual(ArchiveFormat.sniff(v7), .tar)
        expectEqual(ArchiveFormat.sniff(Array(v7.prefix(300))), nil)
    }

    @Test("a V7 header is a tar only with a name, a number for a size and a matching checksum")
    func v7Header() throws {
        let v7 = Array(try fixtureBytes("archives/tar-v7-valid.tar").prefix(512))
        var nameless = v7
        nameless[0] = 0
        expectEqual(ArchiveFormat.sniff(nameless), nil)
        var badSum = v7
        badSum[150] = badSum[150] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
        expectEqual(ArchiveFormat.sniff(badSum), nil)
    }

    @Test("ambiguous starts: a container's magic at offset 0 wins over a tar header further in", arguments: [
        ([0x50, 0x4B, 0x03, 0x04], ArchiveFormat.zip),
        ([0x50, 0x4B, 0x05, 0x06], .zip),
        ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], .sevenZip),
        ([0x1F, 0x8B, 0x08, 0x00], .tarGzip),
    ] as [([UInt8], ArchiveFormat)])
    func ambiguous(_ magic: [UInt8], _ format: ArchiveFormat) throws {
        // The first block of a valid ustar archive, its name overwritten by the magic.
        var block = Array(try fixtureBytes("archives/tar-ustar-valid.tar").prefix(512))
        block.replaceSubrange(0..<magic.count, with: magic)
        expectEqual(ArchiveFormat.sniff(block), format)
    }

    /// Each name, and what its first bytes name once the header's checksum no longer matches.
    @Test("a whole ustar header with a matching checksum is a tar, whatever magic its first member's name starts with",
          arguments: [
              (Array("BZh91-notes.txt".utf8), ArchiveFormat.tar), // no block magic after "BZh9": not bzip2 either way
              (Array("070701-report.txt".utf8), .cpio),
              (Array("070707.csv".utf8), .cpio),
              (Array("MSCF".utf8), .cab),
              ([0x50, 0x4B, 0x03, 0x04, 0x61], .zip),
              ([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0x61], .sevenZip),
          ] as [([UInt8], ArchiveFormat)])
    func magicLikeName(_ name: [UInt8], _ unchecked: ArchiveFormat) throws {
        var block = Array(try fixtureBytes("archives/tar-ustar-valid.tar").prefix(512))
        block.replaceSubrange(0..<100, with: name + [UInt8](repeating: 0, count: 100 - name.count))
        block.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
        let sum = String(block.reduce(0) { $0 + Int($1) }, radix: 8)
        block.replaceSubrange(148..<156, with: Array((String(repeating: "0", count: 6 - sum.count) + sum).utf8) + [0, 0x20])
        expectEqual(ArchiveFormat.sniff(block), .tar)
        block[153] ^= 1 // the checksum's last digit: off by one, neither the unsigned nor the signed sum
        expectEqual(ArchiveFormat.sniff(block), unchecked, "the checksum broken")
    }

    @Test("a ZIP behind a stub is recognised by its end record only when the comment reaches the end")
    func zipAtTheEnd() {
        let end: [UInt8] = [0x50, 0x4B, 0x05, 0x06] + [UInt8](repeating: 0, count: 16)
        let stub = [UInt8](repeating: 0x90, count: 100)
        expect(ArchiveFormat.endsLikeZip(stub + end + [0, 0]))
        expect(ArchiveFormat.endsLikeZip(stub + end + [3, 0] + Array("abc".utf8)), "a three-byte comment")
        expect(!ArchiveFormat.endsLikeZip(stub + end + [3, 0] + Array("abcd".utf8)), "a byte after the comment")
        expect(!ArchiveFormat.endsLikeZip(stub + end + [4, 0] + Array("abc".utf8)), "a comment longer than the file")
        expectEqual(ArchiveFormat.sniff(stub + end + [0, 0]), nil, "the first bytes name nothing")
    }

    @Test("the legacy .lzma header: properties, dictionary sizes and the uncompressed size", arguments: [
        (0x5D, UInt32(1) << 23, UInt64.max, true),
        (0x5D, UInt32(3) << 22, 1234, true),
        (0x5D, UInt32(4096), UInt64.max, true),
        (0x5D, UInt32(2048), UInt64.max, false),
        (0x5D, UInt32(5) << 20, UInt64.max, false),
        (225, UInt32(1) << 23, UInt64.max, false),
        (0x5D, UInt32(1) << 23, UInt64(1) << 38, false),
    ] as [(UInt8, UInt32, UInt64, Bool)])
    func legacyLzma(_ properties: UInt8, _ dictionary: UInt32, _ size: UInt64, _ isLzma: Bool) {
        var header = [properties]
        header += withUnsafeBytes(of: dictionary.littleEndian) { Array($0) }
        header += withUnsafeBytes(of: size.littleEndian) { Array($0) }
        header.append(0)
        expectEqual((ArchiveFormat.sniff(header + [UInt8](repeating: 0x11, count: 20)) == .tarLzma), isLzma)
        header[13] = 1
        expect(ArchiveFormat.sniff(header + [UInt8](repeating: 0x11, count: 20)) != .tarLzma, "the range coder's first byte is zero")
    }

    @Test("isTar and isOptional sort every format")
    func properties() {
        let tars: Set<ArchiveFormat> = [.tar, .tarGzip, .tarBzip2, .tarXz, .tarZstd, .tarLzip, .tarLzma]
        let optional: Set<ArchiveFormat> = [.rar, .iso9660, .cab, .cpio]
        for format in ArchiveFormat.allCases {
            expectEqual(format.isTar, tars.contains(format), "\(format)")
            expectEqual(format.isOptional, optional.contains(format), "\(format)")
        }
    }
}
