import AirlockChild
import AirlockSystem
import AirlockTestSupport
@testable import AirlockZip
import Testing
#if canImport(Glibc)
import Glibc
#endif

private func two() -> ZipBuilder { ZipBuilder([.init("a", "first"), .init("b", "second")]) }

@Suite("ZIP central directory: records that fill it exactly, extra fields read one way, and no byte outside an entry")
struct ZipDirectoryTests {
    // MARK: Reading the drop

    @Test func entryCountPastTheLimitIsNotRead() throws {
        try expectEqual(ZipVerdict.of(two().build().bytes, maxEntries: 2), "accepted")
        try expectEqual(ZipVerdict.of(two().build().bytes, maxEntries: 1), "too many entries: 2")
    }

    @Test func recordPointsPastTheEnd() throws {
        var image = two().build()
        image.set32(image.central[1] + 42, UInt32(image.bytes.count))
        try expectEqual(ZipVerdict.of(image.bytes), "a record points past the end of the file")
    }

    @Test func fileEndsEarly() throws {
        let bytes = two().build().bytes
        try expectEqual(ZipVerdict.of(bytes, declaredSize: Int64(bytes.count) + 8), "the file ended early")
    }

    @Test("a read that fails is the machine's fault, not a verdict on the bytes")
    func readFails() throws {
        let file = DropFile(try ZipVerdict.unreadableFile())
        defer { file.descriptor.close() }
        try expectEqual(ZipVerdict.of(file, size: 100), "unreadable: pread: \(Errno(rawValue: EISDIR))")
    }

    // MARK: Directory records

    @Test func recordSignature() throws {
        var image = two().build()
        image.set32(image.central[1], 0x0201_4B51)
        try expectEqual(ZipVerdict.of(image.bytes), "bad central directory record signature")
    }

    @Test func recordOverrunsTheDirectory() throws {
        var image = two().build()
        image.set16(image.central[1] + 32, 100)  // a comment longer than what is left
        try expectEqual(ZipVerdict.of(image.bytes), "a central directory record overruns the directory")
    }

    @Test("version 6.3 is the newest published; 6.4 is refused")
    func versionNeeded() throws {
        var image = two().build()
        image.set16(image.central[0] + 6, 63)
        try expectEqual(ZipVerdict.of(image.bytes), "accepted")
        image.set16(image.central[0] + 6, 0x0300 | 64)
        try expectEqual(ZipVerdict.of(image.bytes), "a: needs ZIP version 64, newer than any published")
    }

    @Test("flag bit 5, compressed patched data, is refused in the directory record and in the local header")
    func compressedPatchedData() throws {
        var central = two().build()
        central.set16(central.central[1] + 8, 0x0020)
        try expectEqual(ZipVerdict.of(central.bytes), "b: compressed patched data (flag bit 5), which readers take differently")
        var local = two().build()
        local.set16(local.local[1] + 6, 0x0020)
        try expectEqual(ZipVerdict.of(local.bytes), "b: local header disagrees on its flags")
    }

    @Test func entryOnAnotherDisk() throws {
        var image = two().build()
        image.set16(image.central[1] + 34, 1)
        try expectEqual(ZipVerdict.of(image.bytes), "b: multi-disk archive (an entry on another disk)")
    }

    @Test func directoryLongerThanItsRecords() throws {
        var builder = two()
        builder.directoryPadding = [0, 0, 0, 0]
        try expectEqual(ZipVerdict.of(builder.build().bytes), "central directory size disagrees with its records")
    }

    // MARK: Extra fields

    @Test("ZIP64 sizes and offset replace exactly the placeholders, in order, disk included")
    func zip64FieldBaseline() throws {
        var builder = two()
        builder.entries[1].centralExtra = ZipBuilder.zip64Field([6, 6, 0], disk: 0)
        var image = builder.build()
        // The third value of the field, after its id, length and two sizes.
        image.set64(image.central[1] + 46 + 1 + 4 + 16, UInt64(image.local[1]))
        for field in [20, 24, 42] { image.set32(image.central[1] + field, 0xFFFF_FFFF) }
        image.set16(image.central[1] + 34, 0xFFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "accepted")
    }

    @Test("a ZIP64 value past Int64.max is refused",
          arguments: [([6, 1 << 63], "a compressed size"), ([1 << 63, 6], "a size")] as [([UInt64], String)])
    func zip64SizeOutOfRange(values: [UInt64], what: String) throws {
        var builder = two()
        builder.entries[1].centralExtra = ZipBuilder.zip64Field(values)
        var image = builder.build()
        image.set32(image.central[1] + 20, 0xFFFF_FFFF)
        image.set32(image.central[1] + 24, 0xFFFF_FFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "\(what) is out of range")
    }

    @Test func zip64OffsetOutOfRange() throws {
        var builder = two()
        builder.entries[1].centralExtra = ZipBuilder.zip64Field([1 << 63])
        var image = builder.build()
        image.set32(image.central[1] + 42, 0xFFFF_FFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "a local header offset is out of range")
    }

    @Test("fewer than four bytes left over in an extra are ignored; a field that overruns is refused")
    func extraFieldOverruns() throws {
        var builder = two()
        builder.entries[0].centralExtra = [0x55, 0x54, 0x01]
        try expectEqual(ZipVerdict.of(builder.build().bytes), "accepted")
        builder.entries[0].centralExtra = le16(0x5455) + le16(5) + [1, 2, 3, 4]
        try expectEqual(ZipVerdict.of(builder.build().bytes), "an extra field overruns its record")
    }

    @Test("a ZIP64 or Unicode path field given twice", arguments: [0x0001, 0x7075] as [UInt16])
    func fieldTwice(id: UInt16) throws {
        var builder = two()
        let field = id == 1 ? ZipBuilder.zip64Field([]) : ZipBuilder.unicodePathField("a", boundTo: "a")
        builder.entries[0].centralExtra = field + field
        try expectEqual(ZipVerdict.of(builder.build().bytes), "a: extra field 0x\(String(id, radix: 16)) appears twice")
    }

    @Test func unicodePathFieldTruncated() throws {
        var builder = two()
        builder.entries[0].centralExtra = le16(0x7075) + le16(4) + [1, 0, 0, 0]
        try expectEqual(ZipVerdict.of(builder.build().bytes), "a: its Unicode path field is truncated")
    }

    @Test("a placeholder without its ZIP64 value: a size, or the disk number")
    func zip64FieldTooShort() throws {
        var builder = two()
        builder.entries[1].centralExtra = ZipBuilder.zip64Field([]) + [0, 0, 0, 0]
        var image = builder.build()
        image.set32(image.central[1] + 24, 0xFFFF_FFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "ZIP64 extra field too short")
        builder.entries[1].centralExtra = le16(1) + le16(2) + [0, 0]
        image = builder.build()
        image.set16(image.central[1] + 34, 0xFFFF)
        try expectEqual(ZipVerdict.of(image.bytes), "ZIP64 extra field too short")
    }

    // MARK: Unicode path fields

    @Test("a matching Unicode path field is accepted")
    func unicodePathBaseline() throws {
        var builder = two()
        builder.entries[0].centralExtra = ZipBuilder.unicodePathField("a", boundTo: "a")
        builder.entries[0].localExtra = builder.entries[0].centralExtra
        try expectEqual(ZipVerdict.of(builder.build().bytes), "accepted")
    }

    @Test func unicodePathFieldVersion() throws {
        var builder = two()
        builder.entries[0].centralExtra = ZipBuilder.unicodePathField("a", boundTo: "a", version: 2)
        builder.entries[0].localExtra = builder.entries[0].centralExtra
        try expectEqual(ZipVerdict.of(builder.build().bytes), "a: its Unicode path field is not version 1 UTF-8")
    }

    @Test("a Unicode path field whose checksum is of another name is ignored, as the specification and its readers do")
    func unicodePathFieldOfAnotherName() throws {
        var builder = two()
        builder.entries[0].centralExtra = ZipBuilder.unicodePathField("z", boundTo: "not a")
        builder.entries[0].localExtra = builder.entries[0].centralExtra
        try expectEqual(ZipVerdict.of(builder.build().bytes), "accepted")
    }

    @Test func unicodePathFieldNamesOtherText() throws {
        var builder = two()
        builder.entries[0].flags = 0x0800
        builder.entries[0].centralExtra = ZipBuilder.unicodePathField("z", boundTo: "a")
        builder.entries[0].localExtra = builder.entries[0].centralExtra
        try expectEqual(ZipVerdict.of(builder.build().bytes), "a: its Unicode path field names z, the name itself reads as a")
        builder.entries[0].flags = 0
        try expectEqual(ZipVerdict.of(builder.build().bytes), "a: its Unicode path field names z, the name itself reads as a in UTF-8;"
            + " readers that ignore the field would extract another name (if the archive comes from a system with another code page,"
            + " set zip.legacy_encoding)")
    }

    // MARK: Layout

    @Test func entriesOverlap() throws {
        let inner = ZipBuilder([.init("b", "second")]).build()
        var builder = ZipBuilder([.init("a", "")])
        builder.entries[0].data = Array(inner.bytes[0..<inner.directory])
        var shared = ZipBuilder.Entry("b", "second")
        shared.pointsAt = 30 + 1
        builder.entries.append(shared)
        try expectEqual(ZipVerdict.of(builder.build().bytes), "entries overlap: a and b share bytes")
    }

    @Test func bytesBeforeTheFirstEntry() throws {
        var builder = two()
        builder.prefix = Array("MZstub".utf8)
        try expectEqual(ZipVerdict.of(builder.build().bytes), "6 bytes before the first entry that no entry accounts for")
    }

    @Test func bytesBetweenEntries() throws {
        var builder = two()
        builder.gapAfter[0] = [1, 2, 3]
        try expectEqual(ZipVerdict.of(builder.build().bytes), "3 bytes after a that no entry accounts for")
    }

    @Test func bytesBeforeTheDirectory() throws {
        var builder = two()
        builder.gapAfter[1] = [1, 2, 3]
        try expectEqual(ZipVerdict.of(builder.build().bytes), "3 bytes after b that no entry accounts for")
    }

    @Test func bytesBeforeTheDirectoryOfAnEmptyArchive() throws {
        var builder = ZipBuilder()
        builder.prefix = Array("MZstub".utf8)
        try expectEqual(ZipVerdict.of(builder.build().bytes), "6 bytes before the central directory that no entry accounts for")
    }

    @Test func dataRunsIntoTheDirectory() throws {
        var image = two().build()
        image.set32(image.local[1] + 18, 6 + 4)
        image.set32(image.central[1] + 20, 6 + 4)
        try expectEqual(ZipVerdict.of(image.bytes), "b: data runs into the central directory")
    }
}
