import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A fleet's root as tests look at it: the instances' claims, staging, journals and records.
extension Sandbox {
    /// `run --once --instance NAME`.
    func runOnce(instance: String, environment: [String: String] = [:]) throws -> Outcome {
        try airlock(["run", "--once", "--root", root.path, "--instance", instance], environment: environment)
    }

    /// Every claim or staging entry left, as `NAME/ID` for an instance's and `ID` for a single daemon's.
    func held(_ directory: URL) throws -> [String] {
        var found: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
            let path = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if !name.hasPrefix("20"), FileManager.default.fileExists(atPath: path.path, isDirectory: &isDirectory), isDirectory.boolValue {
                found += try FileManager.default.contentsOfDirectory(atPath: path.path).map { name + "/" + $0 }
            } else {
                found.append(name)
            }
        }
        return found
    }

    /// The invariants of a fleet's root after a run: sentinels unchanged, the
    /// inbox empty, nothing claimed or staged by any instance.
    func expectFleetInvariants(sourceLocation: SourceLocation = #_sourceLocation) throws {
        for url in [root.appendingPathComponent("sentinel.txt"), base.appendingPathComponent("sentinel-outside.txt")] {
            expect(((try? String(contentsOf: url, encoding: .utf8)) ?? "").hasPrefix("sentinel "), "sentinel \(url.lastPathComponent) changed",
                    sourceLocation: sourceLocation)
        }
        try expectEqual(held(claimed), [], "claims left behind", sourceLocation: sourceLocation)
        try expectEqual(held(staging), [], "staging left behind", sourceLocation: sourceLocation)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: inbox.path).filter { !$0.hasPrefix(".") }, [],
                "the inbox still holds drops", sourceLocation: sourceLocation)
        expect(!FileManager.default.fileExists(atPath: root.deletingLastPathComponent().appendingPathComponent("outside.txt").path),
                sourceLocation: sourceLocation)
    }

    /// The records of every journal of the root (the root's own and each instance's), with the journal each is in.
    func fleetRecords() throws -> [(journal: String, record: Event)] {
        var result: [(journal: String, record: Event)] = try journalRecords(self).map { ("-", $0) }
        let directory = root.appendingPathComponent("state/journal")
        guard FileManager.default.fileExists(atPath: directory.path) else { return result }
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where name.hasSuffix(".jsonl") {
            result += try Event.journal([directory.appendingPathComponent(name)]).map { (String(name.dropLast(6)), $0) }
        }
        return result
    }

    /// Terminal records across every journal.
    func terminalRecords() throws -> [(journal: String, record: Event)] {
        try fleetRecords().filter { [.accepted, .rejected].contains($0.record.kind) }
    }

    /// `state/instances/NAME.json`.
    func instanceRecord(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: root.appendingPathComponent("state/instances/\(name).json"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

/// A process holding an instance's lock for it (`AIRLOCK_TEST_INSTANCE_LOCK_HELD=1`):
/// killing it frees the lock while the instance itself is stopped, as a shared
/// filesystem's server does when it evicts a frozen client.
final class LockHolder {
    let process = Process()

    init(_ sandbox: Sandbox, instance: String) throws {
        let directory = sandbox.root.appendingPathComponent("state/instances")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // The holder itself holds the lock (flock(1) would leave a command holding it too).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import fcntl, os, sys, time\n"
                             + "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
                             + "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\ntime.sleep(600)\n",
                             directory.appendingPathComponent("\(instance).lock").path]
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let lock = directory.appendingPathComponent("\(instance).lock").path
        // Held once flock(1) runs its command: then a non-blocking lock of ours fails.
        try #require(waitFor(seconds: 10) {
            let fd = open(lock, O_RDONLY)
            defer { close(fd) }
            return fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0
        }, "the holder did not take \(lock)")
    }

    /// Frees the lock.
    func release() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { release() }
}

/// Instance `name` of a fleet running on `sandbox`, its lock held for it by a
/// `LockHolder` (`AIRLOCK_TEST_INSTANCE_LOCK_HELD=1`), so that a test can free the
/// lock while the instance is frozen, as an evicting server would.
func evictableInstance(_ sandbox: Sandbox, _ name: String, environment: [String: String]) throws -> (holder: LockHolder, daemon: RunningDaemon) {
    let holder = try LockHolder(sandbox, instance: name)
    let daemon = try RunningDaemon(sandbox, environment: environment.merging(["AIRLOCK_TEST_INSTANCE_LOCK_HELD": "1"]) { $1 },
                                   label: name, extra: ["--instance", name])
    return (holder, daemon)
}

/// Whether every thread of `pid` is stopped (state T in /proc/PID/task/TID/stat):
/// SIGSTOP stops a process's threads one by one, not at one instant.
func isStopped(_ pid: Int32) -> Bool {
    guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !threads.isEmpty else { return false }
    return threads.allSatisfy { thread in
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return true }  // a thread that ended
        return text[text.index(after: close)...].first { $0 != " " } == "T"
    }
}
