import AirlockTestSupport
import Foundation
import Testing

/// Neither --root nor --config: an installed airlock (PREFIX/bin/airlock with its
/// decoders in PREFIX/libexec/airlock) reads the system configuration; a build
/// tree's works on ./var.
@Suite("An installed airlock without --root or --config uses the system configuration; a build tree uses ./var")
struct SystemConfigurationTests {
    /// The build's programs copied as an installation beneath `prefix` (…/usr): the
    /// executable's location, not a setting, makes it an installed airlock.
    static func install(into prefix: URL) throws -> String {
        let build = URL(fileURLWithPath: Binary.airlock).deletingLastPathComponent()
        let bin = prefix.appendingPathComponent("bin"), libexec = prefix.appendingPathComponent("libexec/airlock")
        for directory in [bin, libexec] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        try FileManager.default.copyItem(at: build.appendingPathComponent("airlock"), to: bin.appendingPathComponent("airlock"))
        for program in ["airlock-decoder", "airlock-keyed-decoder"] {
            try FileManager.default.copyItem(at: build.appendingPathComponent(program), to: libexec.appendingPathComponent(program))
        }
        return bin.appendingPathComponent("airlock").path
    }

    /// Runs `program` with `arguments` in `directory`.
    static func run(_ program: String, _ arguments: [String], in directory: URL) throws -> (status: Int32, output: String) {
        try runTool("/bin/sh", ["-c", #"cd "$1" && shift && exec "$@""#, "sh", directory.path, program] + arguments)
    }

    @Test("installed, no system configuration: status and a bare init exit 78 naming the file, and make no ./var")
    func installedWithoutSystemConfiguration() throws {
        let sandbox = try Sandbox()
        let program = try Self.install(into: sandbox.logs.appendingPathComponent("usr"))
        let cwd = sandbox.logs.appendingPathComponent("cwd")
        try FileManager.default.createDirectory(at: cwd, withIntermediateDirectories: false)
        let expected = "/logs/etc/airlock/airlock.json"
        for command in [["status"], ["init"], ["events"], ["run", "--once"]] {
            let result = try Self.run(program, command, in: cwd)
            expectEqual(result.status, 78, "\(command): \(result.output)")
            expect(result.output.contains(expected + ": an installed airlock"), "\(command): \(result.output)")
            expect(result.output.contains("give --root DIR or --config FILE"), "\(command): \(result.output)")
            expect(!result.output.contains("'airlock init --root var'"), "\(command): \(result.output)")
        }
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: cwd.path), [], "nothing made in the working directory")
        // doctor needs no root: the defaults serve.
        try expectEqual(Self.run(program, ["doctor"], in: cwd).status, 0)
    }

    @Test("installed, with the system configuration: init lays out the root it names without a second airlock.json; every command finds it")
    func installedWithSystemConfiguration() throws {
        let sandbox = try Sandbox()
        let program = try Self.install(into: sandbox.logs.appendingPathComponent("usr"))
        let etc = sandbox.logs.appendingPathComponent("etc/airlock")
        try FileManager.default.createDirectory(at: etc, withIntermediateDirectories: true)
        let config: [String: Any] = ["root": sandbox.root.path]
        try JSONSerialization.data(withJSONObject: config).write(to: etc.appendingPathComponent("airlock.json"))
        let cwd = sandbox.logs

        let initialised = try Self.run(program, ["init"], in: cwd)
        expectEqual(initialised.status, 0, "\(initialised.output)")
        expect(FileManager.default.fileExists(atPath: sandbox.inbox.path))
        expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("airlock.json").path),
                "the system configuration is the root's only one")
        expect(!FileManager.default.fileExists(atPath: cwd.appendingPathComponent("var").path))

        try sandbox.drop(Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip")), as: "a.zip")
        let ran = try Self.run(program, ["run", "--once"], in: cwd)
        expect(ran.status == 0 && ran.output.contains(#""event":"accepted""#), "\(ran.output)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["a"])
        let status = try Self.run(program, ["status", "--json"], in: cwd)
        expect(status.status == 0 && status.output.contains(#""accepted":1"#), "\(status.output)")
        let events = try Self.run(program, ["events"], in: cwd)
        expect(events.status == 0 && events.output.contains(#""event":"accepted""#), "\(events.output)")
        // --root naming that root reads the system configuration too (seen by making it invalid);
        // --root naming another root does not.
        let other = sandbox.logs.appendingPathComponent("other")
        try expectEqual(Self.run(program, ["init", "--root", other.path], in: cwd).status, 0)
        let invalid: [String: Any] = ["root": sandbox.root.path, "outbox": ["group": "airlock-no-such-group"]]
        try JSONSerialization.data(withJSONObject: invalid).write(to: etc.appendingPathComponent("airlock.json"))
        let same = try Self.run(program, ["status", "--root", sandbox.root.path], in: cwd)
        expect(same.status == 78 && same.output.contains("airlock-no-such-group"), "\(same.output)")
        let elsewhere = try Self.run(program, ["status", "--root", other.path], in: cwd)
        expectEqual(elsewhere.status, 0, "\(elsewhere.output)")
    }

    @Test("a build tree without --root works on ./var, as make run does")
    func buildTreeUsesVar() throws {
        let sandbox = try Sandbox()
        let status = try Self.run(Binary.airlock, ["status"], in: sandbox.logs)
        expect(status.status == 78 && status.output.contains("root var: ENOENT"), "\(status.output)")
        let initialised = try Self.run(Binary.airlock, ["init"], in: sandbox.logs)
        expectEqual(initialised.status, 0, "\(initialised.output)")
        expect(FileManager.default.fileExists(atPath: sandbox.logs.appendingPathComponent("var/airlock.json").path))
    }
}
