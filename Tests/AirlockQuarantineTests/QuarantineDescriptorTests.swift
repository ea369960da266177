import AirlockConfiguration
import AirlockEvents
import AirlockPolicy
@testable import AirlockQuarantine
import AirlockRoot
import AirlockTestSupport
import Foundation
import Testing

/// The quarantine's own descriptors (entries, their drops and reports, the
/// inbox a drop is released into, the release and purge marks, the lock and the
/// index) are closed on every way out of the desk, whether it succeeds or refuses.
@Suite("Quarantine desk: nothing of the quarantine stays open after a query, release, purge or refusal")
struct QuarantineDescriptorTests {
    /// A fresh root, initialised and opened; removed afterwards.
    final class Root {
        let base: String
        let path: String
        let layout: RootLayout

        init() throws {
            let made = try #require(mkdtemp(strdup(NSTemporaryDirectory() + "/airlock-desk.XXXXXX")))
            defer { free(made) }
            base = URL(fileURLWithPath: String(cString: made)).resolvingSymlinksInPath().path
            path = base + "/root"
            _ = try RootLayout.initialise(path: path)
            layout = try RootLayout.open(path: path)
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }

        /// A rejected drop's entry, as the intake leaves it: its report and the original.
        func quarantine(_ id: String, name: String) throws {
            let drop = DropIdentity(id: id, name: Array(name.utf8), size: 3, sha256: String(repeating: "ab", count: 32),
                                    uploader: nil, received: "2026-12-01T12:00:00.000Z")
            let report = RejectionReport(drop, Rejection(.pathConflict, "a file and a directory share a name"), policy: Policy(), types: [])
            let directory = path + "/quarantine/" + id
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            try report.encoded().write(to: URL(fileURLWithPath: directory + "/report.json"))
            try Data("zip".utf8).write(to: URL(fileURLWithPath: directory + "/drop"))
        }

        /// What this process holds open of the quarantine's own: beneath the
        /// quarantine and the inbox, the marks, the lock and the index. The root's
        /// directories themselves belong to the layout, and the journal to itself.
        func quarantineDescriptors() -> [String] {
            let prefixes = ["/quarantine/", "/inbox/", "/state/releasing", "/state/purging", "/state/quarantine"].map { path + $0 }
            return descriptorsOpen(beneath: path).filter { target in prefixes.contains { target.hasPrefix($0) } }
        }
    }

    @Test("listing, reading, releasing and purging entries, and each refusal, leave nothing of the quarantine open")
    func everyWayOutCloses() throws {
        let root = try Root()
        let desk = QuarantineDesk(layout: root.layout, configuration: Configuration())
        let first = "20261201T120000Z-0badc0de", second = "20261201T120001Z-0badc0df"
        try root.quarantine(first, name: "a.zip")
        try root.quarantine(second, name: "b.zip")
        try expectEqual(desk.entries().map(\.id).sorted(), [first, second])
        try expect(desk.entry(first).holdsDrop)
        expect(root.quarantineDescriptors().isEmpty)

        try expectEqual(desk.release(first), Array("a.zip".utf8))
        expect(FileManager.default.fileExists(atPath: root.path + "/inbox/a.zip"))
        expect(root.quarantineDescriptors().isEmpty)
        #expect(throws: QuarantineDesk.Refusal.self) { try desk.release(first) }
        #expect(throws: QuarantineDesk.Refusal.self) { try desk.release("20261201T120002Z-00000000") }
        expect(root.quarantineDescriptors().isEmpty)

        // A release a stop interrupted after its mark: recovery finishes it.
        try FileManager.default.createDirectory(atPath: root.path + "/state/releasing", withIntermediateDirectories: true)
        try Data("gone.zip".utf8).write(to: URL(fileURLWithPath: root.path + "/state/releasing/20261201T120003Z-00000001"))
        try desk.recover()
        expect(root.quarantineDescriptors().isEmpty)

        try desk.purge([try desk.entry(second)], note: "test")
        expect(!FileManager.default.fileExists(atPath: root.path + "/quarantine/" + second))
        try expectEqual(QuarantineIndex(desk: desk).rebuild(), 1)
        expect(root.quarantineDescriptors().isEmpty)
    }

    @Test("a lock that cannot be taken, or an inbox that is gone, refuses and leaves nothing open")
    func refusalsClose() throws {
        let root = try Root()
        let desk = QuarantineDesk(layout: root.layout, configuration: Configuration())
        let id = "20261201T120000Z-0badc0de"
        try root.quarantine(id, name: "a.zip")
        try FileManager.default.removeItem(atPath: root.path + "/inbox")
        #expect(throws: QuarantineDesk.Refusal.self) { try desk.release(id) }
        expect(root.quarantineDescriptors().isEmpty)
        // The release above made the lock file: a directory in its place cannot be locked.
        try FileManager.default.removeItem(atPath: root.path + "/state/quarantine.lock")
        try FileManager.default.createDirectory(atPath: root.path + "/state/quarantine.lock", withIntermediateDirectories: false)
        #expect(throws: (any Error).self) { try desk.release(id) }
        #expect(throws: (any Error).self) { try desk.purge([try desk.entry(id)]) }
        expect(root.quarantineDescriptors().isEmpty)
        expect(FileManager.default.fileExists(atPath: root.path + "/quarantine/" + id + "/drop"))
    }
}
