import AirlockSystem
import AirlockTestSupport
@testable import AirlockZip
import Testing

/// One plain entry, and the same with a ZIP64 end record and locator.
private func plain(zip64: Bool = false) -> ZipBuilder.Image {
    var builder = ZipBuilder([.init("a.txt", "hello")])
    builder.zip64 = zip64
    return builder.build()
}

@Suite("ZIP end records: exactly one end record, and a ZIP64 record every reader finds in the same place")
struct ZipEndRecordTests {
    @Test("the builder's archives are accepted, with and without ZIP64 end records, as the baseline every rejection departs from")
    func baseline() throws {
        try expectEqual(ZipVerdict.of(plain().bytes), "accepted")
        try expectEqual(ZipVerdict.of(plain(zip64: true).bytes), "accepted")
        try expectEqual(ZipVerdict.of(ZipBuilder().build().bytes), "accepted", "an empty archive is its end record alone")
        var trueValues = plain(zip64: true)
        trueValues.set16(trueValues.end + 8, 1)
        trueValues.set16(trueValues.end + 10, 1)
        trueValues.set32(trueValues.end + 16, UInt32(trueValues.directory))
        try expectEqual(ZipVerdict.of(trueValues.bytes), "accepted", "the end record may hold the true values instead of placeholders")
    }

    @Test func tooShortForAnEndRecord() throws {
        try expectEqual(ZipVerdict.of(Array(plain().bytes.suffix(21))), "too short for a ZIP end record")
    }

    @Test func bytesAfterTheEndRecord() throws {
        try expectEqual(ZipVerdict.of(plain().bytes + [0]), "no end record whose comment ends at the end of the file (truncated, or bytes after the archive)")
    }

    @Test func twoEndRecordsFitTheEnd() throws {
        var builder = ZipBuilder([.init("a.txt", "hello")])
        builder.comment = le32(0x0605_4B50) + [UInt8](repeating: 0, count: 18)
        try expectEqual(ZipVerdict.of(builder.build().bytes), "2 end records fit the end of the file: readers would disagree on the directory")
    }

    @Test func commentHoldsAnotherSignature() throws {
        var builder = ZipBuilder([.init("a.txt", "hello")])
        builder.comment = Array("see ".utf8) + le32(0x0605_4B50) + Array(" here".utf8)
        try expectEqual(ZipVerdict.of(builder.build().bytes), "the archive comment holds another end record signature")
    }

    @Test func endRecordOnAnotherDisk() throws {
        var image = plain()
        image.set16(image.end + 4, 1)
        try expectEqual(ZipVerdict.of(image.bytes), "multi-disk archive")
    }

    @Test func endRecordCountsDisagree() throws {
        var image = plain()
        image.set16(image.end + 8, 2)
        try expectEqual(ZipVerdict.of(image.bytes), "the end record's entry counts disagree")
    }

    @Test func locatorNamesAnotherDisk() throws {
        var image = plain(zip64: true)
        image.set32(image.locator! + 16, 2)
        try expectEqual(ZipVerdict.of(image.bytes), "multi-disk archive (ZIP64 locator)")
    }

    @Test func locatorOffsetOutOfRange() throws {
        var image = plain(zip64: true)
        image.set64(image.locator! + 8, UInt64(Int64.max) + 1)
        try expectEqual(ZipVerdict.of(image.bytes), "the ZIP64 end record offset is out of range")
    }

    @Test func locatorOffsetNearTheTopOfInt64() throws {
        var image = plain(zip64: true)
        image.set64(image.locator! + 8, UInt64(Int64.max) - 10)
        try expectEqual(ZipVerdict.of(image.bytes), "a declared size or offset is out of range")
    }

    @Test func zip64RecordNotWhereTheLocatorPoints() throws {
        var image = plain(zip64: true)
        image.set64(image.locator! + 8, UInt64(image.zip64End! - 1))
        try expectEqual(ZipVerdict.of(image.bytes), "the ZIP64 end record is not where its locator points")
    }

    @Test func zip64RecordSignature() throws {
        var image = plain(zip64: true)
        image.set32(image.zip64End!, 0x0606_4B51)
        try expectEqual(ZipVerdict.of(image.bytes), "bad ZIP64 end record signature")
    }

    @Test func zip64RecordSize() throws {
        var image = plain(zip64: true)
        image.set64(image.zip64End! + 4, 52)
        try expectEqual(ZipVerdict.of(image.bytes), "ZIP64 end record size is inconsistent")
    }

    @Test func zip64RecordOnAnotherDisk() throws {
        var image = plain(zip64: true)
        image.set32(image.zip64End! + 20, 1)
        try expectEqual(ZipVerdict.of(image.bytes), "multi-disk archive (ZIP64 end record)")
    }

    @Test func zip64RecordCountsDisagree() throws {
        var image = plain(zip64: true)
        image.set64(image.zip64End! + 24, 2)
        try expectEqual(ZipVerdict.of(image.bytes), "the ZIP64 end record's entry counts disagree")
    }

    @Test("a ZIP64 count, size or offset past Int64.max is refused, never converted",
          arguments: [(24, "the ZIP64 entry count"), (40, "the ZIP64 directory size"), (48, "the ZIP64 directory offset")])
    func zip64FieldOutOfRange(field: Int, what: String) throws {
        var image = plain(zip64: true)
        image.set64(image.zip64End! + field, UInt64.max)
        if field == 24 { image.set64(image.zip64End! + 32, UInt64.max) }
        try expectEqual(ZipVerdict.of(image.bytes), "\(what) is out of range")
    }

    @Test func directoryEndOverflowsInt64() throws {
        var image = plain(zip64: true)
        image.set64(image.zip64End! + 48, UInt64(Int64.max))
        try expectEqual(ZipVerdict.of(image.bytes), "a declared size or offset is out of range")
    }

    @Test("an end record value that is neither the placeholder nor the ZIP64 record's value",
          arguments: [(4, 2), (6, 2), (8, 2), (10, 2), (12, 4), (16, 4)])
    func endRecordDisagreesWithZip64(field: Int, width: Int) throws {
        var image = plain(zip64: true)
        if width == 2 { image.set16(image.end + field, 7) } else { image.set32(image.end + field, 7) }
        try expectEqual(ZipVerdict.of(image.bytes), "the end record disagrees with the ZIP64 end record")
    }

    @Test func stubWithOffsetsThatDoNotCountIt() throws {
        var builder = ZipBuilder([.init("a.txt", "hello")])
        builder.prefix = Array("#!stub\n".utf8)
        builder.offsetsCountPrefix = false
        try expectEqual(ZipVerdict.of(builder.build().bytes), "7 bytes before the archive or after its directory that no entry accounts for")
    }

    @Test func directoryRunsPastTheEndRecords() throws {
        var image = plain()
        image.set32(image.end + 12, UInt32(image.end - image.directory + 1))
        try expectEqual(ZipVerdict.of(image.bytes), "the central directory runs past the end records")
    }
}
