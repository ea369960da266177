import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// On ext4 the staging writer reserves a large file's declared size when it
/// creates it (fallocate, keeping the size), so that its writes need not
/// allocate block by block.
@Suite("The staging writer reserves a large file's declared size on ext4, and nothing more")
struct StagingWriterReserveTests {
    /// Whether the scratch directory's filesystem is ext4, where the writer reserves.
    static let scratchIsExt4: Bool = {
        guard let fixture = try? StagingFixture(), let root = try? FileDescriptor.openDirectory(path: fixture.staging.path) else { return false }
        defer { root.close() }
        return (try? FilesystemKind(of: root))?.isExt4 ?? false
    }()

    static func status(_ fixture: StagingFixture, _ name: String) throws -> (size: Int64, allocated: Int64) {
        var st = stat()
        try #require(lstat(fixture.staging.appendingPathComponent(name).path, &st) == 0)
        return (Int64(st.st_size), Int64(st.st_blocks) * 512)
    }

    /// Whether `allocated` is `size` plus at most the extent tree's own blocks.
    /// ext4 counts those in st_blocks: where free space is fragmented, a 3 MiB
    /// reservation comes in many extents and the tree outgrows the inode (on a
    /// loop ext4 whose free space was every other block, 3 MiB + 10 KiB
    /// reserved, 3 MiB + 45 KiB once written over). A sixteenth is far above
    /// that and far below any over-reservation, a doubled or rounded-up size.
    static func holdsJust(_ size: Int64, _ allocated: Int64) -> Bool {
        allocated >= size && allocated <= size + size / 16
    }

    @Test("a file declared 3 MiB has its blocks at once and size 0; written, exactly its bytes; smaller or undeclared ones reserve nothing",
          .enabled(if: scratchIsExt4, "skipped: the scratch directory is not on ext4, where the writer reserves"))
    func reservesTheDeclaredSize() throws {
        let fixture = try StagingFixture()
        var writer = try fixture.writer()
        defer { writer.close() }
        let size = Int64(3 << 20)
        try writer.beginFile(try entry("big.bin"), size: size)
        let begun = try Self.status(fixture, "big.bin")
        expectEqual(begun.size, 0)
        expect(Self.holdsJust(size, begun.allocated), "\(begun)")
        let chunk = [UInt8](repeating: 0x61, count: 1 << 16)
        for _ in 0..<(size >> 16) { try chunk.withUnsafeBytes { try writer.write($0) } }
        try writer.endFile()
        let written = try Self.status(fixture, "big.bin")
        expectEqual(written.size, size)
        expect(Self.holdsJust(size, written.allocated), "\(written)")
        try expectEqual(Data(contentsOf: fixture.staging.appendingPathComponent("big.bin")), Data(repeating: 0x61, count: Int(size)))

        try writer.beginFile(try entry("under.bin"), size: (1 << 20) - 1)
        expectEqual(try Self.status(fixture, "under.bin").allocated, 0)
        try writer.endFile()
        try writer.beginFile(try entry("undeclared.bin"), size: nil)
        expectEqual(try Self.status(fixture, "undeclared.bin").allocated, 0)
        try writer.endFile()
        try fixture.expectOutsideUntouched()
    }
}
