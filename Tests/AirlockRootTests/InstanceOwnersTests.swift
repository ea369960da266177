import AirlockConfiguration
@testable import AirlockRoot
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("An instance's lock and state/instances/ close when their last holder goes, acquired or refused")
struct InstanceOwnersTests {
    @Test("a held instance lock holds its lock file, the run lock and state/instances/; dropped, none; a second taker holds none")
    func lockAcquiredRefusedDropped() throws {
        let root = try RootLayoutOpenTests.Root()
        let layout = try RootLayout.open(path: root.path).forInstance("one")
        let own = descriptorsOpen(beneath: root.path)
        do {
            let lock = try InstanceLock.acquire(layout, name: "one", commitMode: .noreplace)
            let held = ["/state/airlock.pid", "/state/instances", "/state/instances/one.lock"].map { root.path + $0 }
            expectEqual(descriptorsOpen(beneath: root.path), (own + held).sorted())
            #expect(throws: InstanceLock.Refusal.self) { try InstanceLock.acquire(layout, name: "one", commitMode: .noreplace) }
            expectEqual(descriptorsOpen(beneath: root.path), (own + held).sorted())
            expectEqual(layout.instances().map(\.running), [true])
            expectEqual(descriptorsOpen(beneath: root.path), (own + held).sorted())
            withExtendedLifetime(lock) {}
        }
        expectEqual(descriptorsOpen(beneath: root.path), own)
        expectEqual(layout.instances().map(\.running), [false])
        expectEqual(descriptorsOpen(beneath: root.path), own)
    }

    @Test("a copy of state/instances/ outlives the lock that opened it, then closes")
    func directoryOutlivesLock() throws {
        let root = try RootLayoutOpenTests.Root()
        let layout = try RootLayout.open(path: root.path).forInstance("two")
        let own = descriptorsOpen(beneath: root.path)
        do {
            let instances: InstanceDirectory
            do {
                instances = try InstanceLock.acquire(layout, name: "two", commitMode: .noreplace).instances
            }
            expectEqual(descriptorsOpen(beneath: root.path), (own + [root.path + "/state/instances"]).sorted())
            try expectEqual(instances.names(), ["two"])
        }
        expectEqual(descriptorsOpen(beneath: root.path), own)
    }
}
