import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `sudo airlock … --config FILE` on a root another user owns: the configuration is
/// read as the owner of the directory holding it, never through that user's links,
/// and its `root` key cannot choose whose root the superuser acts on.
@Suite("Root-run commands read a configuration as its directory's owner, never through a planted link",
       .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct ConfigurationOwnerTests {
    init() throws { try Parties.require() }

    static let token = "SECRET-TOKEN-\(UUID().uuidString.prefix(8))"

    /// A root the service user owns, and beside it (outside the root) a directory
    /// only root may read holding a secret whose first token a parse error would show.
    func layOut() throws -> (Sandbox, secretDirectory: URL) {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        expectEqual(chmod(sandbox.base.path, 0o711), 0)
        let chowned = try runTool("/bin/chown", ["-R", "\(Parties.service):\(Parties.service)", sandbox.root.path])
        try #require(chowned.status == 0, "\(chowned.output)")
        let secrets = sandbox.logs.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: false)
        expectEqual(chmod(secrets.path, 0o700), 0)
        try Data("\(Self.token) is not JSON\n".utf8).write(to: secrets.appendingPathComponent("shadow.json"))
        expectEqual(chmod(secrets.appendingPathComponent("shadow.json").path, 0o600), 0)
        return (sandbox, secrets)
    }

    /// Makes a link at `path` to `target`, owned by the service user, as if it had planted it.
    func plant(_ path: URL, to target: URL) throws {
        try FileManager.default.createSymbolicLink(atPath: path.path, withDestinationPath: target.path)
        let service = getpwnam(Parties.service).pointee
        expectEqual(lchown(path.path, service.pw_uid, service.pw_gid), 0)
    }

    @Test("a configuration that is a link the service user planted is refused, 78, and nothing of its target is shown")
    func linkedFileRefused() throws {
        let (sandbox, secrets) = try layOut()
        let evil = sandbox.root.appendingPathComponent("evil.json")
        try plant(evil, to: secrets.appendingPathComponent("shadow.json"))
        for command in [["status"], ["quarantine", "list"], ["doctor"], ["history"]] {
            let result = try airlock(command + ["--config", evil.path])
            expectEqual(result.status, 78, "\(command): \(result.status) \(result.stderr)")
            expect(result.stderr.contains("is a symbolic link"), "\(command): \(result.stderr)")
            expect(!(result.stdout + result.stderr).contains(Self.token), "\(command): the secret leaked")
        }
        try sandbox.expectInvariants()
    }

    @Test("a link the service user planted on the way to the configuration is refused, 77, and nothing is read through it")
    func linkedDirectoryRefused() throws {
        let (sandbox, secrets) = try layOut()
        let link = sandbox.root.appendingPathComponent("etc")
        try plant(link, to: secrets)
        let result = try airlock(["status", "--config", link.appendingPathComponent("shadow.json").path])
        expectEqual(result.status, 77, "\(result.status) \(result.stderr)")
        expect(result.stderr.contains("refuse to follow a link owned by uid"), "\(result.stderr)")
        expect(!(result.stdout + result.stderr).contains(Self.token))
        let rootLink = sandbox.base.appendingPathComponent("logs/root-link")
        try plant(rootLink, to: sandbox.root)
        let viaRoot = try airlock(["status", "--root", rootLink.path])
        expectEqual(viaRoot.status, 77, "a root reached through another user's link: \(viaRoot.status) \(viaRoot.stderr)")
    }

    @Test("a configuration owned by neither its directory's owner nor root is refused, 77")
    func foreignOwnerRefused() throws {
        let (sandbox, _) = try layOut()
        let file = sandbox.root.appendingPathComponent("planted.json")
        try Data("{\"root\": \"\(sandbox.root.path)\"}".utf8).write(to: file)
        let consumer = getpwnam(Parties.consumer).pointee
        expectEqual(chown(file.path, consumer.pw_uid, consumer.pw_gid), 0)
        let result = try airlock(["status", "--config", file.path])
        expectEqual(result.status, 77, "\(result.status) \(result.stderr)")
        expect(result.stderr.contains("neither its directory's owner"), "\(result.stderr)")
    }

    @Test("the service user's configuration is read as the service user, and its root key cannot make root act as root")
    func rootKeyCannotChooseTheOwner() throws {
        let (sandbox, _) = try layOut()
        // A second root that root owns, with something private in its quarantine.
        let other = try Sandbox()
        try other.initialise()
        try other.drop(Samples.traversalZip, as: "private-\(Self.token).zip")
        try expectEqual(other.runOnce().status, 0)
        expectEqual(chmod(other.base.path, 0o711), 0)
        let file = sandbox.root.appendingPathComponent("aimed.json")
        try Data("{\"root\": \"\(other.root.path)\"}".utf8).write(to: file)
        let service = getpwnam(Parties.service).pointee
        expectEqual(chown(file.path, service.pw_uid, service.pw_gid), 0)
        let result = try airlock(["quarantine", "list", "--config", file.path])
        expect(result.stderr.contains("acting as \(Parties.service)"), "\(result.stderr)")
        expectEqual(result.status, 77, "\(result.status) \(result.stderr)")
        expect(!result.stdout.contains(Self.token), "root's private quarantine was listed for the service user")

        // Its own configuration, naming its own root, works as before.
        let own = sandbox.root.appendingPathComponent("own.json")
        try Data("{\"root\": \"\(sandbox.root.path)\"}".utf8).write(to: own)
        expectEqual(chown(own.path, service.pw_uid, service.pw_gid), 0)
        let status = try airlock(["status", "--config", own.path])
        expectEqual(status.status, 0, "\(status.stderr)")
        expect(status.stderr.contains("acting as \(Parties.service)"), "\(status.stderr)")
        try expectEqual(RootOwnerTests.rootOwned(sandbox.root).filter { !$0.hasSuffix(".json") }, [])
    }
}
