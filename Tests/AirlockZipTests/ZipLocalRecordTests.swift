import AirlockSystem
import AirlockTestSupport
@testable import AirlockZip
import Testing

private func single(_ data: String = "hello", method: UInt16 = 0) -> ZipBuilder {
    ZipBuilder([.init("a.txt", data, method: method)])
}

/// An entry whose sizes and CRC follow its data in a descriptor (flag bit 3).
private func described(_ data: [UInt8], method: UInt16 = 0, descriptor: [UInt8]? = nil) -> ZipBuilder {
    var entry = ZipBuilder.Entry("a.txt", method: method, flags: 0x0008)
    entry.data = data
    entry.trailer = descriptor ?? ZipBuilder.descriptor(crc: entry.checksum, size: data.count)
    return ZipBuilder([entry])
}

@Suite("ZIP local records: what a streaming reader sees says what the directory says")
struct ZipLocalRecordTests {
    @Test("the builder's entries with and without a data descriptor, narrow or wide, are accepted")
    func baseline() throws {
        try expectEqual(ZipVerdict.of(single().build().bytes), "accepted")
        try expectEqual(ZipVerdict.of(described(Array("hello".utf8)).build().bytes), "accepted")
        let data = Array("hello".utf8)
        var wide = described(data, descriptor: ZipBuilder.descriptor(crc: ZipCRC.of(data), size: 5, wide: true))
        wide.entries[0].centralExtra = ZipBuilder.zip64Field([])
        try expectEqual(ZipVerdict.of(wide.build().bytes), "accepted", "a ZIP64 field makes the descriptor's sizes 8 bytes wide")
        var flags = single().build()
        flags.set16(flags.local[0] + 6, 0x0002)  // a compression option bit: not one the headers must share
        try expectEqual(ZipVerdict.of(flags.bytes), "accepted")
    }

    @Test func noLocalHeaderThere() throws {
        var image = single().build()
        image.set32(image.local[0], 0x0403_4B51)
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: no local header where the central directory points")
    }

    @Test("the local header names another entry: other bytes, or another length")
    func localNameDiffers() throws {
        var image = single().build()
        image.bytes[image.local[0] + 30] = UInt8(ascii: "b")
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: local header names another entry, b.txt")
        image = single().build()
        image.set16(image.local[0] + 26, 4)
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: local header names another entry, a.tx")
    }

    @Test("names in other bytes that decode alike are one name: CP437 in the directory, flagged UTF-8 in the local header")
    func localNameDecodesAlike() throws {
        var entry = ZipBuilder.Entry("x", "hello")
        entry.name = Array("F\u{F6}.txt".utf8)
        var builder = ZipBuilder([entry])
        builder.entries[0].flags = 0x0800
        var image = builder.build()
        // The directory's copy in CP437 (ö is 0x94) without the flag; the local header keeps UTF-8 and the flag.
        var central = image.bytes[..<(image.central[0] + 46)] + [0x46, 0x94, 0x2E, 0x74, 0x78, 0x74]
        central += image.bytes[(image.central[0] + 46 + 7)...]
        image.bytes = Array(central)
        image.set16(image.central[0] + 8, 0)
        image.set16(image.central[0] + 28, 6)
        let end = image.bytes.count - 22
        image.set32(end + 12, UInt32(end - image.central[0]))
        try expectEqual(ZipVerdict.of(image.bytes), "accepted")
        // Without the local flag the local bytes read as UTF-8 all the same (they are valid UTF-8).
        image.set16(image.local[0] + 6, 0)
        try expectEqual(ZipVerdict.of(image.bytes), "accepted")
    }

    @Test func localMethodDiffers() throws {
        var image = single().build()
        image.set16(image.local[0] + 8, 8)
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: local header disagrees on the method")
    }

    @Test("the flags both headers must share: encryption, strong encryption, descriptor",
          arguments: [0x0001, 0x0040, 0x0008] as [UInt16])
    func localFlagsDiffer(flag: UInt16) throws {
        var image = single().build()
        image.set16(image.local[0] + 6, flag)
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: local header disagrees on its flags")
    }

    @Test("a Unicode path field in one header only is accepted when it names what the name decodes to")
    func unicodePathFieldOnlyInOneHeader() throws {
        var builder = single()
        builder.entries[0].centralExtra = ZipBuilder.unicodePathField("a.txt", boundTo: "a.txt")
        try expectEqual(ZipVerdict.of(builder.build().bytes), "accepted")
        builder = single()
        builder.entries[0].localExtra = ZipBuilder.unicodePathField("a.txt", boundTo: "a.txt")
        try expectEqual(ZipVerdict.of(builder.build().bytes), "accepted")
    }

    @Test("a local Unicode path field bound to the name that names another is refused")
    func localUnicodePathFieldNamesAnother() throws {
        var builder = single()
        builder.entries[0].localExtra = ZipBuilder.unicodePathField("b.txt", boundTo: "a.txt")
        try expect(ZipVerdict.of(builder.build().bytes).hasPrefix("a.txt: its Unicode path field names b.txt, the name itself reads as a.txt"))
    }

    @Test func localExtraOverruns() throws {
        var builder = single()
        builder.entries[0].localExtra = le16(0x5455) + le16(9) + [1]
        try expectEqual(ZipVerdict.of(builder.build().bytes), "an extra field overruns its record")
    }

    @Test("the local CRC, compressed size or size disagrees", arguments: [14, 18, 22])
    func localSizesDiffer(field: Int) throws {
        var image = single().build()
        image.set32(image.local[0] + field, 4)
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: local header disagrees on the CRC or the sizes")
    }

    @Test("local ZIP64 sizes are read from the local ZIP64 field, and must agree too")
    func localZip64Sizes() throws {
        var builder = single()
        builder.entries[0].localExtra = ZipBuilder.zip64Field([5, 5])
        var image = builder.build()
        image.set32(image.local[0] + 18, 0xFFFF_FFFF)
        image.set32(image.local[0] + 22, 0xFFFF_FFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "accepted")
        builder.entries[0].localExtra = ZipBuilder.zip64Field([5, 6])
        image = builder.build()
        image.set32(image.local[0] + 18, 0xFFFF_FFFF)
        image.set32(image.local[0] + 22, 0xFFFF_FFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: local header disagrees on the CRC or the sizes")
    }

    @Test func storedDataHoldsTheDescriptorSignature() throws {
        let data = Array("before".utf8) + le32(0x0807_4B50) + Array("after".utf8)
        try expectEqual(ZipVerdict.of(described(data).build().bytes), "a.txt: stored data holds a data descriptor signature (at byte 41), where a streaming reader would end it")
        try expectEqual(ZipVerdict.of(described(data, method: 8).build().bytes), "accepted",
                "compressed data ends where its stream ends, whatever bytes it holds")
    }

    @Test("the signature is found across the boundary between two 64 KiB reads", arguments: [1, 2, 3])
    func signatureAcrossReads(before: Int) throws {
        var data = [UInt8](repeating: 0x61, count: 70_000)
        data.replaceSubrange((65_536 - before)..<(65_536 - before + 4), with: le32(0x0807_4B50))
        try expectEqual(ZipVerdict.of(described(data).build().bytes), "a.txt: stored data holds a data descriptor signature (at byte \(30 + 5 + 65_536 - before)), where a streaming reader would end it")
    }

    @Test("a stored entry's descriptor without its signature is accepted while no signature follows it")
    func storedDescriptorWithoutSignature() throws {
        let data = Array("hello".utf8)
        let unsigned = ZipBuilder.descriptor(crc: ZipCRC.of(data), size: 5, signature: false)
        try expectEqual(ZipVerdict.of(described(data, descriptor: unsigned).build().bytes), "accepted")
        try expectEqual(ZipVerdict.of(described(data, method: 8, descriptor: unsigned).build().bytes), "accepted")
        var wide = described(data, descriptor: ZipBuilder.descriptor(crc: ZipCRC.of(data), size: 5, signature: false, wide: true))
        wide.entries[0].centralExtra = ZipBuilder.zip64Field([])
        try expectEqual(ZipVerdict.of(wide.build().bytes), "accepted")
        // A later entry's signed descriptor is where a streaming reader would end the first.
        var then = described(data, descriptor: unsigned)
        var second = ZipBuilder.Entry("b.txt", method: 8, flags: 0x0008)
        second.data = Array("bye".utf8)
        second.trailer = ZipBuilder.descriptor(crc: second.checksum, size: 3)
        then.entries.append(second)
        let image = then.build()
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: its data descriptor has no signature, and a streaming reader would take"
            + " the one at byte \(image.local[1] + 30 + 5 + 3) for its end")
    }

    @Test func descriptorTruncated() throws {
        var image = described(Array("hello".utf8), method: 8).build()
        // The directory claims data up to ten bytes before the end of the file.
        let dataStart = image.local[0] + 30 + 5
        image.set32(image.central[0] + 20, UInt32(image.bytes.count - 10 - dataStart))
        try expectEqual(ZipVerdict.of(image.bytes), "a.txt: data descriptor truncated")
    }

    @Test("the descriptor's CRC, compressed size or size disagrees", arguments: [4, 8, 12])
    func descriptorDisagrees(field: Int) throws {
        let data = Array("hello".utf8)
        var descriptor = ZipBuilder.descriptor(crc: ZipCRC.of(data), size: 5)
        descriptor.replaceSubrange(field..<(field + 4), with: le32(4))
        try expectEqual(ZipVerdict.of(described(data, descriptor: descriptor).build().bytes), "a.txt: data descriptor disagrees with the central directory")
    }

    @Test("a narrow descriptor where a ZIP64 field makes it wide is read wide, and disagrees")
    func narrowDescriptorForZip64() throws {
        var builder = described(Array("hello".utf8))
        builder.entries[0].centralExtra = ZipBuilder.zip64Field([])
        try expectEqual(ZipVerdict.of(builder.build().bytes), "a.txt: data descriptor disagrees with the central directory")
    }

    @Test("a data size near Int64.max is refused, never added with a trap")
    func dataEndOverflows() throws {
        var builder = described(Array("hello".utf8), method: 8)
        builder.entries[0].centralExtra = ZipBuilder.zip64Field([5, UInt64(Int64.max)])
        var image = builder.build()
        image.set32(image.central[0] + 20, 0xFFFF_FFFF)
        image.set32(image.central[0] + 24, 0xFFFF_FFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "a declared size or offset is out of range")
    }
}
