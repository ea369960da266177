import AirlockConfiguration
@testable import AirlockRoot
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("The run lock, the lease probe and the path checks hold nothing open but what they keep")
struct RootOwnersTests {
    /// What this process holds open beneath `path` other than the layout's own
    /// directories (by /proc/self/fd, beneath a root made for this test alone).
    private func filesOpen(beneath root: RootLayoutOpenTests.Root, _ layout: RootLayout) -> [String] {
        let directories = Set([""] + RootLayout.directories.map { "/" + $0.path.joined(separator: "/") }).map { root.path + $0 }
        return descriptorsOpen(beneath: root.path).filter { !directories.contains($0) }
    }

    @Test("the run lock holds its file while it lives, a second taker and a holder query hold none after")
    func runLockCloses() throws {
        let root = try RootLayoutOpenTests.Root()
        let layout = try RootLayout.open(path: root.path)
        defer { withExtendedLifetime(layout) {} }
        let pidFile = root.path + "/state/airlock.pid"
        do {
            let lock = try #require(try RunLock.acquire(layout, mode: "once"))
            expectEqual(filesOpen(beneath: root, layout), [pidFile])
            try expect(RunLock.acquire(layout, mode: "once") == nil)
            expect(RunLock.holder(layout).running)
            expectEqual(filesOpen(beneath: root, layout), [pidFile])
            withExtendedLifetime(lock) {}
        }
        expect(filesOpen(beneath: root, layout).isEmpty)
        expect(!RunLock.holder(layout).running)
        expect(filesOpen(beneath: root, layout).isEmpty)
    }

    @Test("the lease probe and the configured-path checks, passing or refusing, leave nothing open")
    func probesClose() throws {
        let root = try RootLayoutOpenTests.Root()
        let layout = try RootLayout.open(path: root.path)
        defer { withExtendedLifetime(layout) {} }
        _ = ProducerFileAccess.probe(layout)
        expect(filesOpen(beneath: root, layout).isEmpty)
        expect(!FileManager.default.fileExists(atPath: root.path + "/state/lease-probe.\(getpid())"))
        // The checks open the root's own directories again to compare them: what is
        // open beneath the test's directory after is exactly what was before.
        let before = descriptorsOpen(beneath: root.base)
        var configuration = Configuration()
        configuration.metricsPath = root.path + "/outbox/metrics.prom"
        #expect(throws: ConfigurationError.self) { try configuration.checkPaths(in: layout, configurationFile: nil) }
        configuration.metricsPath = root.base + "/metrics.prom"
        try configuration.checkPaths(in: layout, configurationFile: nil)
        expectEqual(descriptorsOpen(beneath: root.base), before)
    }
}
