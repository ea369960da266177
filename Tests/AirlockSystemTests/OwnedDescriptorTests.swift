import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("OwnedDescriptor: a descriptor with one owner is closed once, on every way out")
struct OwnedDescriptorTests {
    private struct Planned: Error {}

    private func openOwned(_ directory: Scratch) throws -> OwnedDescriptor {
        OwnedDescriptor(try FileDescriptor.openDirectory(path: directory.path))
    }

    @Test("closed when its scope ends, whether the scope returns or throws")
    func closedAtScopeEnd() throws {
        let directory = try Scratch("owned")
        do {
            let owned = try openOwned(directory)
            // The owner is used after the count, so it lives until then.
            expect(descriptorsOpen(beneath: directory.path).count == 1 && (try? owned.descriptor.status())?.kind == .directory)
        }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
        func failing() throws {
            let owned = try openOwned(directory)
            _ = try owned.descriptor.status()
            throw Planned()
        }
        #expect(throws: Planned.self) { try failing() }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }

    @Test("take() hands it on open; close() closes it at once")
    func takeAndClose() throws {
        let directory = try Scratch("owned")
        let taken = try openOwned(directory).take()
        expectEqual(descriptorsOpen(beneath: directory.path).count, 1)
        taken.close()
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
        let owned = try openOwned(directory)
        owned.close()
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }

    @Test("several owned together are all closed when their owner ends, none once taken")
    func severalOwned() throws {
        let directory = try Scratch("owned")
        do {
            var owned = OwnedDescriptors()
            for _ in 0..<3 { owned.append(try openOwned(directory)) }
            expect(descriptorsOpen(beneath: directory.path).count == 3 && owned.count == 3)
        }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
        var owned = OwnedDescriptors()
        owned.append(try openOwned(directory))
        owned.append(try openOwned(directory))
        let taken = owned.take()
        expectEqual(descriptorsOpen(beneath: directory.path).count, 2)
        taken.forEach { $0.close() }
        expect(descriptorsOpen(beneath: directory.path).isEmpty)
    }
}
