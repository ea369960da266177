import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Command line: init, configuration errors, usage errors, check-path, inspect")
struct CommandLineTests {
    /// Nothing that looks like a crash or a stack trace.
    func expectClean(_ outcome: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        for marker in ["Fatal error", "Stack dump", "backtrace", "Swift runtime failure"] {
            expect(!outcome.stderr.contains(marker), "\(outcome.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test("init lays out the root with a private state directory and is idempotent")
    func initIdempotent() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let config = try Data(contentsOf: sandbox.root.appendingPathComponent("airlock.json"))
        let again = try airlock(["init", "--root", sandbox.root.path])
        expectEqual(again.status, 0)
        try expectEqual(Data(contentsOf: sandbox.root.appendingPathComponent("airlock.json")), config)
        var st = stat()
        expectEqual(stat(sandbox.root.appendingPathComponent("state").path, &st), 0)
        expectEqual(st.st_mode & 0o777, 0o700)
        for name in ["inbox", "outbox", "quarantine", "state/claimed", "state/staging"] {
            var isDirectory: ObjCBool = false
            expect(FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent(name).path, isDirectory: &isDirectory))
            expect(isDirectory.boolValue)
        }
        let text = String(decoding: config, as: UTF8.self)
        for key in ["max_entries", "max_file_bytes", "max_total_bytes", "max_drop_bytes", "max_component_bytes", "max_path_bytes",
                    "max_depth", "max_ratio", "ratio_min_bytes", "file_mode", "timeout_seconds", "address_space_bytes",
                    "cpu_seconds", "open_files", "sync"] {
            expect(text.contains("\"\(key)\""), "airlock.json lacks \(key)")
        }
    }

    @Test("init and run refuse a root whose directories span filesystems",
          .enabled(if: Requirement.mounts, "needs CAP_SYS_ADMIN (root) and mount, to mount a tmpfs on the outbox"))
    func spanningFilesystems() throws {
        let sandbox = try Sandbox()
        let outbox = sandbox.root.appendingPathComponent("outbox")
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        let mount = try airlockShell("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "airlock-test", outbox.path])
        try #require(mount == 0, "mounting a tmpfs failed, though this process holds CAP_SYS_ADMIN")
        defer { _ = try? airlockShell("/bin/umount", [outbox.path]) }
        let result = try airlock(["init", "--root", sandbox.root.path])
        expectEqual(result.status, 78)
        expect(result.stderr.contains("another filesystem"), "\(result.stderr)")
        expectClean(result)
        let run = try airlock(["run", "--once", "--root", sandbox.root.path])
        expectEqual(run.status, 78)
        expect(run.stderr.contains("another filesystem"), "\(run.stderr)")
    }

    @Test("a bad configuration exits 78 naming the key", arguments: [
        (#"{"policy": {"max_entries": -1}}"#, "policy.max_entries"),
        (#"{"policy": {"max_file_bytes": 0}}"#, "policy.max_file_bytes"),
        (#"{"policy": {"bogus": 1}}"#, "policy.bogus"),
        (#"{"decoder": {"cpu_seconds": "ten"}}"#, "decoder.cpu_seconds"),
        (#"{"policy": "#, "not valid JSON"),
    ])
    func badConfiguration(_ text: String, _ mention: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try Data(text.utf8).write(to: sandbox.root.appendingPathComponent("airlock.json"))
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 78)
        expect(result.stderr.contains(mention), "\(result.stderr)")
        expectClean(result)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.inbox.path), ["photos.zip"], "nothing was processed")
    }

    @Test("--config names the root")
    func configFile() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let result = try airlock(["run", "--config", sandbox.root.appendingPathComponent("airlock.json").path, "--once"])
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.first?.kind, .accepted)
        try sandbox.expectInvariants()
    }

    @Test("a root that was never laid out exits 78")
    func missingRoot() throws {
        let sandbox = try Sandbox()
        let result = try airlock(["run", "--once", "--root", sandbox.root.path])
        expectEqual(result.status, 78)
        expect(result.stderr.contains("airlock init"))
        expectClean(result)
    }

    @Test("usage errors exit 64 with a message", arguments: [
        [], ["frobnicate"], ["run", "--once", "--bogus"], ["run", "--root", "a", "--config", "b", "--once"],
        ["run", "--root"], ["check-path"], ["inspect"], ["inspect", "a", "b"], ["init", "x"],
    ])
    func usageErrors(_ arguments: [String]) throws {
        let result = try airlock(arguments)
        expectEqual(result.status, 64, "\(arguments) → \(result.status)")
        expect(result.stderr.contains("airlock: error:"))
        expectClean(result)
    }

    @Test("check-path passes the documented good names and fails each bad one with exit 65")
    func checkPath() throws {
        let good = try airlock(["check-path", "docs/readme.txt", "docs/", "report..txt"])
        expectEqual(good.status, 0)
        expectEqual(good.stdout.split(separator: "\n").count, 3)
        for bad in ["../outside.txt", "docs/../../outside.txt", "/tmp/outside.txt", "docs//readme.txt", "docs/./readme.txt",
                    "docs\\..\\outside.txt", "C:/outside.txt"] {
            let result = try airlock(["check-path", "docs/readme.txt", "--", bad])
            expectEqual(result.status, 65, "\(bad)")
            expect(result.stdout.contains("unsafe-path"), "\(bad): \(result.stdout)")
        }
    }

    @Test("inspect gives run's verdict and writes nothing")
    func inspect() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let before = try sandbox.listing(sandbox.base)
        let good = try airlock(["inspect", Samples.fixture("zip-deflate-valid.zip").path, "--root", sandbox.root.path])
        expectEqual(good.status, 0, "\(good.stderr)")
        expectEqual(good.events.first?.verdict, .accepted)
        expectEqual(good.events.first?.files, 5)
        let bad = try airlock(["inspect", Samples.fixture("zip-traversal.zip").path, "--root", sandbox.root.path])
        expectEqual(bad.status, 65)
        expectEqual(bad.events.first?.reason, "unsafe-path")
        let bomb = try airlock(["inspect", Samples.fixture("targz-bomb.tar.gz").path, "--root", sandbox.root.path])
        expectEqual(bomb.events.first?.reason, "ratio-too-high")
        try expectEqual(sandbox.listing(sandbox.base), before, "inspect wrote something")
        try sandbox.expectInvariants()
    }

    @Test("inspect refuses a FIFO without blocking and reports a missing file")
    func inspectSpecial() throws {
        let sandbox = try Sandbox()
        let fifo = sandbox.base.appendingPathComponent("pipe")
        expectEqual(mkfifo(fifo.path, 0o644), 0)
        let result = try airlock(["inspect", fifo.path])
        expectEqual(result.status, 65)
        expectEqual(result.events.first?.reason, "not-regular-file")
        let missing = try airlock(["inspect", sandbox.base.appendingPathComponent("absent.zip").path])
        expectEqual(missing.status, 66)
        expectClean(missing)
    }
}

/// Runs a system command, returning its exit status.
func airlockShell(_ executable: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}
