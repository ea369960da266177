import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Analysts through sudo: the person is recorded, their groups decide, spoofed variables are ignored",
       .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct AnalystTests {
    init() throws { try Parties.require() }

    /// A root owned by the service party holding one unsafe-path entry.
    func serviceRoot() throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        expectEqual(chmod(sandbox.base.path, 0o711), 0)
        let chowned = try runTool("/bin/chown", ["-R", "\(Parties.service):\(Parties.service)", sandbox.root.path])
        try #require(chowned.status == 0, "\(chowned.output)")
        let id = try #require(try sandbox.onlyQuarantined()?.id)
        return (sandbox, id)
    }

    @Test("an analyst outside airlock-review is refused release and purge with 77 and a message naming the group; the entry stays")
    func viewerRefused() throws {
        let (sandbox, id) = try serviceRoot()
        let uid = try #require(getpwnam(Parties.producer)).pointee.pw_uid
        let script = #"SUDO_UID="$2" SUDO_USER="$3"; export SUDO_UID SUDO_USER; shift 3; exec "$0" "$@" 2>&1"#
        func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
            try runTool("/usr/bin/setpriv", ["--reuid", Parties.service, "--regid", Parties.service, "--init-groups", "--", "/bin/sh", "-c",
                                             script, Binary.airlock, "-", "\(uid)", Parties.producer] + arguments)
        }
        let release = try run(["quarantine", "release", id, "--reason", "looks fine", "--root", sandbox.root.path])
        expectEqual(release.status, 77, "\(release.output)")
        expect(release.output.contains("\(Parties.producer) may not release or purge"), "\(release.output)")
        expect(release.output.contains("airlock-review"), "\(release.output)")
        let purge = try run(["quarantine", "purge", id, "--reason", "x", "--root", sandbox.root.path])
        expectEqual(purge.status, 77, "\(purge.output)")
        // Not in airlock-view either: not even a look.
        let list = try run(["quarantine", "list", "--root", sandbox.root.path])
        expect(list.status == 77 && list.output.contains("airlock-view"), "\(list.output)")
        // Through sudo only the root named by --root is used.
        let config = try run(["quarantine", "list", "--config", sandbox.root.appendingPathComponent("airlock.json").path])
        expect(config.status == 77 && config.output.contains("--config"), "\(config.output)")
        expect(FileManager.default.fileExists(atPath: sandbox.quarantine.appendingPathComponent(id).appendingPathComponent("drop").path))
    }

    @Test("the superuser through sudo is recorded as the person sudo names; a SUDO_USER that is not SUDO_UID's name is ignored")
    func spoofIgnored() throws {
        let (sandbox, id) = try serviceRoot()
        // The superuser acting through sudo for the service user is recorded as that person, with every right.
        let released = try airlock(["quarantine", "release", id, "--reason", "checked", "--root", sandbox.root.path],
                                   environment: ["SUDO_UID": "\(try #require(getpwnam(Parties.consumer)).pointee.pw_uid)",
                                                 "SUDO_USER": Parties.consumer])
        expectEqual(released.status, 0, "\(released.stderr)")
        let records = try airlock(["history", "--json", "--root", sandbox.root.path]).events.filter { $0.kind == .released }
        expectEqual(records.count, 1)
        guard case .released(let released) = records.first else { Issue.record("no released record"); return }
        expectEqual(released.by, Parties.consumer)
        expectEqual(released.releaseReason, "checked")
        // A name that does not belong to the uid is not believed.
        let (other, otherId) = try serviceRoot()
        let purged = try airlock(["quarantine", "purge", otherId, "--root", other.root.path],
                                 environment: ["SUDO_UID": "\(try #require(getpwnam(Parties.consumer)).pointee.pw_uid)", "SUDO_USER": "root"])
        expectEqual(purged.status, 0, "\(purged.stderr)")
        let purges = try airlock(["history", "--json", "--root", other.root.path]).events.filter { $0.kind == .purged }
        guard case .purged(let purge) = purges.first else { Issue.record("no purged record"); return }
        expectEqual(purge.by, "root")
    }
}
