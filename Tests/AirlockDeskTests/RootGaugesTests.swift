@testable import AirlockConfiguration
@testable import AirlockDesk
@testable import AirlockRoot
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The gauges `metrics` and `status` show are measured from the root's
/// directories as they are, not counted as drops pass.
@Suite("RootGauges: measured from the root's directories")
struct RootGaugesTests {
    /// A fresh root, initialised and opened; removed afterwards.
    final class Root {
        /// Holds the root's parent directory, removed when the root goes.
        private let scratch: Scratch
        let path: String
        let layout: RootLayout

        init() throws {
            scratch = try Scratch("gauges")
            path = scratch.path + "/root"
            _ = try RootLayout.initialise(path: path)
            layout = try RootLayout.open(path: path)
        }

        /// Writes `bytes` at `relative`, last modified `age` seconds ago.
        func write(_ relative: String, _ bytes: String, age: TimeInterval = 0) throws {
            let url = URL(fileURLWithPath: path + "/" + relative)
            try Data(bytes.utf8).write(to: url)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: url.path)
        }
    }

    @Test("a fresh root measures empty, with the filesystem's free bytes")
    func freshRoot() throws {
        let root = try Root()
        let gauges = try RootGauges.measure(root.layout, Configuration())
        expect(gauges.quarantineEntries == 0 && gauges.quarantineBytes == 0)
        expect(gauges.claimedDrops == 0 && gauges.oldestClaimSeconds == 0 && gauges.oldestInboxSeconds == 0)
        expectEqual(gauges.abandoned, AbandonedUploads())
        expect(gauges.freeBytes > 0)
    }

    @Test("quarantine entries and bytes, claims, the oldest inbox drop and temporary names are counted apart")
    func populatedRoot() throws {
        let root = try Root()
        try FileManager.default.createDirectory(atPath: root.path + "/quarantine/q1", withIntermediateDirectories: false)
        try root.write("quarantine/q1/drop", "12345")
        try root.write("quarantine/q1/report.json", "{}")
        try FileManager.default.createDirectory(atPath: root.path + "/state/claimed/c1", withIntermediateDirectories: false)
        try root.write("inbox/old.zip", "zip", age: 600)
        try root.write("inbox/new.zip.part", "partial", age: 3600)
        let gauges = try RootGauges.measure(root.layout, Configuration())
        expectEqual(gauges.quarantineEntries, 1)
        expectEqual(gauges.quarantineBytes, 7)
        expectEqual(gauges.claimedDrops, 1)
        // The temporary name is older, but it is an upload in progress, not a drop waiting.
        expect((600..<900).contains(gauges.oldestInboxSeconds))
        expectEqual(gauges.abandoned.count, 1)
        expect(gauges.abandoned.oldestSeconds >= 3600)
        // Given the quarantine's totals (from its index), the walk is skipped.
        let indexed = try RootGauges.measure(root.layout, Configuration(), quarantine: (entries: 9, bytes: 99))
        expect(indexed.quarantineEntries == 9 && indexed.quarantineBytes == 99)
    }
}
