import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A pids cgroup of its own for one test: cgroup v2 where the unified hierarchy
/// offers the pids controller, else v1's pids hierarchy. nil when neither can be
/// made, with the reason.
struct PidsCgroup {
    let path: String

    /// Why no group could be made.
    struct Unavailable: Error {
        let reason: String
    }

    static func make(limit: Int) -> Result<PidsCgroup, Unavailable> {
        let name = "airlock-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let v2 = "/sys/fs/cgroup"
        let v1 = "/sys/fs/cgroup/pids"
        var parent: String?
        if let controllers = try? String(contentsOfFile: v2 + "/cgroup.controllers", encoding: .utf8), controllers.contains("pids") {
            parent = v2
        } else if FileManager.default.fileExists(atPath: v1 + "/cgroup.procs") {
            parent = v1
        }
        guard let parent else { return .failure(Unavailable(reason: "the kernel offers no pids controller (neither cgroup v2's nor v1's)")) }
        let path = parent + "/" + name
        guard mkdir(path, 0o755) == 0 else { return .failure(Unavailable(reason: "mkdir \(path): \(String(cString: strerror(errno)))")) }
        guard (try? "\(limit)".write(toFile: path + "/pids.max", atomically: false, encoding: .utf8)) != nil else {
            rmdir(path)
            return .failure(Unavailable(reason: "cannot write \(path)/pids.max"))
        }
        return .success(PidsCgroup(path: path))
    }

    /// Sets the limit to the tasks the group runs now, once that number has stood
    /// still for a second (at most 10 s): no task can be added from then on.
    func holdAtCurrentTasks() {
        func current() -> String { ((try? String(contentsOfFile: path + "/pids.current", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
        var last = current()
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline {
            usleep(1_000_000)
            let now = current()
            if now == last { break }
            last = now
        }
        try? last.write(toFile: path + "/pids.max", atomically: false, encoding: .utf8)
    }

    /// Whether a group can be made here at all: the kernel's pids controller, and
    /// the right to make groups in its hierarchy (root, or a delegated one).
    static let available: Bool = {
        guard case .success(let probe) = make(limit: 64) else { return false }
        probe.remove()
        return true
    }()

    /// Kills what is left in the group and removes it.
    func remove() {
        let pids = ((try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8)) ?? "").split(separator: "\n")
        for pid in pids { if let pid = Int32(pid) { kill(pid, SIGKILL) } }
        _ = waitFor(seconds: 5) { rmdir(path) == 0 }
    }
}

/// A host out of processes is ordinary: with too few tasks for the supervisor's
/// threads and its decoder children, `run --once` defers what it cannot start and
/// exits 75 in bounded time, never waits forever; with enough, it accepts all.
@Suite("Task limits: run --once in a pids cgroup defers what it cannot start and ends", .serialized)
struct TaskLimitTests {
    @Test("in a pids cgroup of N tasks, run --once ends within 60 s, each drop accepted or deferred, none judged",
          .enabled(if: PidsCgroup.available, "needs the pids cgroup controller (v2 or v1) and the right to make groups in it (root)"),
          arguments: [4, 8, 10, 12, 64])
    func boundedUnderTaskLimit(_ limit: Int) throws {
        let cgroup = try PidsCgroup.make(limit: limit).get()
        defer { cgroup.remove() }
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let zip = try Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip"))
        let count = 30
        for index in 0..<count { try sandbox.drop(zip, as: "drop-\(index).zip") }
        let started = Date()
        // The shell joins the group, then becomes airlock; `timeout` bounds a regression.
        let outcome = try airlock(["run", "--once", "--root", sandbox.root.path],
                                  under: ["/bin/sh", "-c", "echo $$ > \(cgroup.path)/cgroup.procs && exec timeout -s KILL 90 \"$0\" \"$@\""])
        let seconds = Date().timeIntervalSince(started)
        let accepted = outcome.events.filter { $0.kind == .accepted }.count
        let deferred = outcome.events.filter { $0.kind == .deferred }.count
        print("task limit \(limit): status \(outcome.status), \(String(format: "%.1f", seconds)) s, \(accepted) accepted, \(deferred) deferred")
        expect(seconds < 60, "run --once took \(seconds) s")
        expectEqual(outcome.status, (deferred > 0 ? 75 : 0), "\(outcome.stderr.suffix(2000))")
        expectEqual(accepted + deferred, count)
        expect(outcome.events.filter { $0.kind == .rejected }.isEmpty)
        try expect(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).isEmpty)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path).count, deferred)
        // Said once per episode, not once per drop.
        if deferred > 0 { expectEqual(outcome.stderr.components(separatedBy: "decoder children cannot be started").count, 2) }
        if limit >= 64 { expectEqual(accepted, count) }
        // Once the limit is gone, the next run finishes what was deferred.
        let again = try sandbox.runOnce()
        expectEqual(again.status, 0)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, count)
        try sandbox.expectInvariants()
    }

    @Test("a daemon in a full pids cgroup retries with backoff, says so once and in status, and lands every drop once tasks are free",
          .needsLeases,
          .enabled(if: PidsCgroup.available, "needs the pids cgroup controller (v2 or v1) and the right to make groups in it (root)"))
    func daemonRetriesUntilTasksAreFree() throws {
        let cgroup = try PidsCgroup.make(limit: 10).get()
        defer { cgroup.remove() }
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox, under: ["/bin/sh", "-c", "echo $$ > \(cgroup.path)/cgroup.procs && exec \"$0\" \"$@\""])
        // The group is then held at the tasks the daemon runs once settled, so that
        // no decoder child can start however the machine's load shapes the start-up
        // (at a fixed limit of 10, a loaded machine let children through and every
        // drop landed before status could see the episode).
        cgroup.holdAtCurrentTasks()
        let count = 10
        for index in 0..<count { try sandbox.drop(Samples.validZip, as: "drop-\(index).zip") }
        expect(waitFor(seconds: 30) { daemon.events.contains { $0.kind == .deferred } }, "\(daemon.stderr.suffix(2000))")
        // A limit that lets a child through now and then ends an episode and begins another: poll.
        var status = ""
        expect(waitFor(seconds: 30, every: 0.25) {
            status = (try? airlock(["status", "--root", sandbox.root.path]).stdout) ?? ""
            return status.contains("CANNOT BE STARTED")
        }, "\(status)")
        expectEqual(daemon.stderr.components(separatedBy: "decoder children cannot be started").count, 2, "said once")
        try "max".write(toFile: cgroup.path + "/pids.max", atomically: false, encoding: .utf8)
        expect(waitFor(seconds: 60) {
            Set(daemon.events.filter { $0.kind == .accepted }.compactMap { $0.drop }).count == count
        }, "\(daemon.stderr.suffix(2000))")
        expectEqual(daemon.events.filter { $0.kind == .accepted }.count, count)
        expect(daemon.events.filter { $0.kind == .rejected }.isEmpty)
        try expect(!airlock(["status", "--root", sandbox.root.path]).stdout.contains("CANNOT BE STARTED"))
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
        try sandbox.expectInvariants()
    }
}
