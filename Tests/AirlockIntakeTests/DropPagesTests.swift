@testable import AirlockIntake
import AirlockSystem
import AirlockTestSupport
import Dispatch
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A large accepted drop's cached pages go once the decoder and the hash have
/// read it, on a thread of their own, rather than in the removal after the commit.
@Suite("Drop pages: a large drop's page cache is let go once its hash has read it, not before")
struct DropPagesTests {
    /// How many of the file's pages are in the page cache (mincore of a mapping
    /// that is never touched, so nothing is faulted in).
    static func residentPages(_ path: String) throws -> (resident: Int, total: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        var status = stat()
        try #require(fstat(fd, &status) == 0)
        let size = Int(status.st_size)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let map = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0)
        try #require(map != MAP_FAILED)
        defer { munmap(map, size) }
        let count = (size + page - 1) / page
        var vector = [UInt8](repeating: 0, count: count)
        try #require(mincore(map, size, &vector) == 0)
        return (vector.filter { $0 & 1 != 0 }.count, count)
    }

    /// A file of `size` bytes, written, made durable (clean pages are the ones
    /// that can go) and read back, so that all of it is cached.
    static func cachedFile(_ scratch: Scratch, _ name: String, size: Int) throws -> String {
        let path = scratch.path + "/" + name
        let page = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 131) })
        var data = Data(capacity: size)
        while data.count < size { data.append(page.prefix(size - data.count)) }
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        try #require(fsync(fd) == 0)
        _ = try Data(contentsOf: URL(fileURLWithPath: path))
        return path
    }

    /// How many of this process's descriptors are open on `path` (other tests run
    /// beside this one, so only the drop's own are counted).
    static func descriptors(on path: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
    }

    /// Whether the scratch directory's filesystem gives clean pages back when asked
    /// (tmpfs keeps them: its pages are the file).
    static let filesystemDropsPages: Bool = {
        guard let scratch = try? Scratch("pages-probe"),
              let path = try? cachedFile(scratch, "probe", size: 1 << 20),
              let fd = try? FileDescriptor.open(path: path, [.readOnly]) else { return false }
        defer { fd.close() }
        guard (try? fd.dropCachedPages()) != nil, let after = try? residentPages(path) else { return false }
        return after.resident < after.total / 2
    }()

    @Test("a large drop's pages stay cached while its hash is read and go once it is; the copy of its descriptor is closed",
          .enabled(if: filesystemDropsPages, "skipped: this filesystem keeps a file's pages in memory (tmpfs)"))
    func largeDropPagesGoAfterTheHash() throws {
        let scratch = try Scratch("pages")
        let size = Int(DropPages.releaseMinimumBytes) + (1 << 20)
        let path = try Self.cachedFile(scratch, "drop", size: size)
        let cached = try Self.residentPages(path)
        try #require(cached.resident == cached.total, "the file was not all cached: \(cached)")
        let drop = try FileDescriptor.open(path: path, [.readOnly])
        defer { drop.close() }
        expectEqual(Self.descriptors(on: path), 1)
        let hashRead = DispatchSemaphore(value: 0)
        expect(DropPages.release(drop, size: Int64(size), after: { hashRead.wait(); return nil }))
        // The hash is still reading: every page stays.
        Thread.sleep(forTimeInterval: 0.1)
        expectEqual(try Self.residentPages(path).resident, cached.total)
        hashRead.signal()
        var left = try Self.residentPages(path).resident
        for _ in 0..<500 where left > 0 || Self.descriptors(on: path) != 1 {
            Thread.sleep(forTimeInterval: 0.01)
            left = try Self.residentPages(path).resident
        }
        expectEqual(left, 0)
        expectEqual(Self.descriptors(on: path), 1)
    }

    @Test("a drop under the minimum is left to its removal: no thread, no copy of its descriptor")
    func smallDropIsLeftAlone() throws {
        let scratch = try Scratch("pages-small")
        let size = Int(DropPages.releaseMinimumBytes) - 1
        let path = try Self.cachedFile(scratch, "drop", size: size)
        let drop = try FileDescriptor.open(path: path, [.readOnly])
        defer { drop.close() }
        expect(!DropPages.release(drop, size: Int64(size), after: { Issue.record("the hash was waited for"); return nil }))
        expectEqual(Self.descriptors(on: path), 1)
        let cached = try Self.residentPages(path)
        expectEqual(cached.resident, cached.total)
    }
}
