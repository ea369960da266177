import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Commands run as root on a root another user owns act as that user; a user without access gets 77",
       .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct RootOwnerTests {
    init() throws { try Parties.require() }

    /// Paths beneath `url` that root owns.
    static func rootOwned(_ url: URL) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: url.path).filter { path in
            var st = stat()
            return lstat(url.appendingPathComponent(path).path, &st) == 0 && st.st_uid == 0
        }
    }

    @Test("run, release, purge with journal rotation and init, run by root, leave nothing root-owned")
    func rootRunCommandsWriteAsTheOwner() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("journal", ["max_bytes": 1])
        try sandbox.configure("policy", ["max_entries": 1])
        expectEqual(chmod(sandbox.base.path, 0o711), 0)
        let owner = Parties.service
        let chowned = try runTool("/bin/chown", ["-R", "\(owner):\(owner)", sandbox.root.path])
        try #require(chowned.status == 0, "\(chowned.output)")

        let zip = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip"))
        try sandbox.drop(zip, as: "many.zip")
        _ = chown(sandbox.inbox.appendingPathComponent("many.zip").path, getpwnam(owner).pointee.pw_uid, getpwnam(owner).pointee.pw_gid)
        let ran = try sandbox.runOnce()
        expectEqual(ran.status, 0, "\(ran.stderr)")
        expect(ran.stderr.contains("acting as \(owner)"), "\(ran.stderr)")
        let id = try #require(try sandbox.onlyQuarantined()?.id)

        try sandbox.configure("policy", ["max_entries": 1000])
        _ = try runTool("/bin/chown", ["\(owner):\(owner)", sandbox.root.appendingPathComponent("airlock.json").path])
        let released = try airlock(["quarantine", "release", id, "--root", sandbox.root.path])
        expectEqual(released.status, 0, "\(released.stderr)")
        let again = try sandbox.runOnce()
        expectEqual(again.events.first?.kind, .accepted, "\(again.stdout) \(again.stderr)")
        let purged = try airlock(["quarantine", "purge", id, "--root", sandbox.root.path])
        expectEqual(purged.status, 0, "\(purged.stderr)")
        let initialised = try airlock(["init", "--root", sandbox.root.path])
        expectEqual(initialised.status, 0, "\(initialised.stderr)")
        let status = try airlock(["status", "--root", sandbox.root.path])
        expectEqual(status.status, 0, "\(status.stderr)")

        let journals = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.appendingPathComponent("state").path)
            .filter { $0.hasPrefix("journal") }
        expect(journals.count > 1, "the journal rotated: \(journals)")
        try expectEqual(Self.rootOwned(sandbox.root), [], "root-owned beneath the root")
        // The owner's own tools see everything, so the service keeps working on it.
        let listed = try Parties.run(owner, #"exec "$1" history --root "$2" >/dev/null"#, [Binary.airlock, sandbox.root.path])
        expectEqual(listed.status, 0, "\(listed.output)")
    }

    @Test("a user who may not open the root gets exit 77 with the path and the fix, not 'run init'")
    func permissionDeniedIs77() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        expectEqual(chmod(sandbox.base.path, 0o711), 0)
        _ = try runTool("/bin/chown", ["-R", "\(Parties.service):\(Parties.service)", sandbox.root.path])
        for command in ["status", "history", "run --once"] {
            let result = try Parties.run(Parties.consumer, #"exec "$1" "$@""#.replacingOccurrences(of: #""$@""#, with: command + #" --root "$2""#),
                                         [Binary.airlock, sandbox.root.path])
            expectEqual(result.status, 77, "\(command): \(result.status) \(result.output)")
            expect(result.output.contains("permission denied: \(sandbox.root.path)/quarantine: EACCES"), "\(command): \(result.output)")
            expect(result.output.contains("sudo -u \(Parties.service)"), "\(command): \(result.output)")
            expect(!result.output.contains("run 'airlock init"), "\(command): \(result.output)")
        }
    }
}
