import AirlockSystem
import Foundation
import Testing

/// What this process holds open beneath `path` (by /proc/self/fd). Other tests
/// run at the same time and hold descriptors too, but none beneath a directory
/// made for one test alone, so the answer is exact.
func descriptorsOpen(beneath path: String) -> [String] {
    let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return numbers.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
        .filter { $0 == path || $0.hasPrefix(path + "/") }
}

/// A directory of this test's own, by its canonical path; removed afterwards.
final class PrivateDirectory {
    let path: String

    init() throws {
        let made = try #require(mkdtemp(strdup(NSTemporaryDirectory() + "/airlock-owned.XXXXXX")))
        defer { free(made) }
        path = try #require(realpath(made, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        })
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite("OwnedDescriptor: a descriptor with one owner is closed once, on every way out")
struct OwnedDescriptorTests {
    private struct Planned: Error {}

    private func openOwned(_ directory: PrivateDirectory) throws -> OwnedDescriptor {
        OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
    }

    @Test("closed when its scope ends, whether the scope returns or throws")
    func closedAtScopeEnd() throws {
        let directory = try PrivateDirectory()
        do {
            let owned = try openOwned(directory)
            // The owner is used after the count, so it lives until then.
            #expect(descriptorsOpen(beneath: directory.path).count == 1 && (try? owned.descriptor.status())?.kind == .directory)
        }
        #expect(descriptorsOpen(beneath: directory.path).isEmpty)
        func failing() throws {
            let owned = try openOwned(directory)
            _ = try owned.descriptor.status()
            throw Planned()
        }
        #expect(throws: Planned.self) { try failing() }
        #expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }

    @Test("take() hands it on open; close() closes it at once")
    func takeAndClose() throws {
        let directory = try PrivateDirectory()
        let taken = try openOwned(directory).take()
        #expect(descriptorsOpen(beneath: directory.path).count == 1)
        taken.close()
        #expect(descriptorsOpen(beneath: directory.path).isEmpty)
        let owned = try openOwned(directory)
        owned.close()
        #expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }

    @Test("several owned together are all closed when their owner ends, none once taken")
    func severalOwned() throws {
        let directory = try PrivateDirectory()
        do {
            var owned = OwnedDescriptors()
            for _ in 0..<3 { owned.append(try openOwned(directory)) }
            #expect(descriptorsOpen(beneath: directory.path).count == 3 && owned.count == 3)
        }
        #expect(descriptorsOpen(beneath: directory.path).isEmpty)
        var owned = OwnedDescriptors()
        owned.append(try openOwned(directory))
        owned.append(try openOwned(directory))
        let taken = owned.take()
        #expect(descriptorsOpen(beneath: directory.path).count == 2)
        taken.forEach { $0.close() }
        #expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }
}
