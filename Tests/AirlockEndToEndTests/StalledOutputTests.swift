import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// No reader stalls intake: events go through a bounded buffer written by a
/// thread of its own, and are dropped from standard output (the journal keeps
/// them) when its reader does not keep up.
@Suite("Stalled output: a reader that stops reading standard output stalls nothing", .needsLeases, .serialized)
struct StalledOutputTests {
    /// A pipe nobody will read, shrunk to one page (fcntl F_SETPIPE_SZ), so that a
    /// few hundred lines fill it rather than the thousands its default 64 KiB takes.
    static func unreadPipe() throws -> Pipe {
        let pipe = Pipe()
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ, which Glibc's Swift module does not export
        let size = fcntl(pipe.fileHandleForWriting.fileDescriptor, setPipeSize, 4096)
        try #require(size == 4096, "fcntl(F_SETPIPE_SZ, 4096) answered \(size), errno \(errno)")
        return pipe
    }

    @Test("with standard output a pipe nobody reads, 150 drops land, the watchdog is kept, SIGTERM stops cleanly")
    func unreadStandardOutput() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("metrics", ["path": sandbox.logs.appendingPathComponent("airlock.prom").path, "interval_seconds": 1])
        let socket = try FakeNotifySocket(at: sandbox.logs.appendingPathComponent("notify"))
        // Nobody ever reads this pipe; the test holds its read end open, so writes block once it is full.
        let unread = try Self.unreadPipe()
        // A 4 KiB buffer: 150 events (over 200 bytes each) overflow it and the pipe's 4 KiB several times over.
        let daemon = try RunningDaemon(sandbox, environment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "400000",
                                                              "AIRLOCK_TEST_OUTPUT_BUFFER_BYTES": "4096"],
                                       standardOutput: unread)
        let count = 150
        for index in 0..<count { try sandbox.drop(Samples.validZip, as: "drop-\(index).zip") }
        var received: [String] = []
        var watchdogsWhileFull = 0
        let landed = waitFor(seconds: 600) {
            let messages = socket.messages()
            received += messages
            if daemon.stderr.contains("are not being read") { watchdogsWhileFull += messages.filter { $0 == "WATCHDOG=1" }.count }
            return ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count) ?? 0) == count
        }
        expect(landed, "the outbox holds \((try? FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count) ?? -1) of \(count)")
        expect(daemon.stderr.contains("events on standard output are not being read"), "\(daemon.stderr.suffix(2000))")
        // The watchdog went on while standard output was full, and goes on now. Nobody
        // ever reads the pipe, so it is still full after the last drop: with few drops
        // the intake may end soon after the pipe filled, and the notifications that
        // come after it count as "while full" too (at least two of them after it).
        var after = 0
        expect(waitFor(seconds: 5) {
            let notifications = socket.messages().filter { $0 == "WATCHDOG=1" }.count
            after += notifications
            watchdogsWhileFull += notifications
            return after >= 2 && watchdogsWhileFull >= 4
        }, "\(watchdogsWhileFull) watchdog notifications after the pipe filled, \(after) after the last drop landed")
        expect(waitFor(seconds: 10) {
            let metrics = (try? String(contentsOf: sandbox.logs.appendingPathComponent("airlock.prom"), encoding: .utf8)) ?? ""
            return metrics.split(separator: "\n").contains { line in
                line.hasPrefix("airlock_output_dropped_total{stream=\"stdout\"} ") && !line.hasSuffix(" 0")
            }
        }, "airlock_output_dropped_total counts the dropped events")
        // The journal is the record: every drop's terminal record is there.
        let journal = try String(contentsOf: sandbox.root.appendingPathComponent("state/journal.jsonl"), encoding: .utf8)
        expectEqual(journal.split(separator: "\n").filter { $0.contains("\"event\":\"accepted\"") }.count, count)
        daemon.signal(SIGTERM)
        // What is queued gets at most 10 s to be written: nobody reads it.
        expectEqual(daemon.waitForExit(seconds: 60), 0, "\(daemon.stderr.suffix(2000))")
        try sandbox.expectInvariants()
    }

    @Test("with standard output and standard error pipes nobody reads, drops land, the watchdog is kept, SIGTERM stops cleanly")
    func unreadStandardError() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let socket = try FakeNotifySocket(at: sandbox.logs.appendingPathComponent("notify"))
        // Neither pipe is ever read; the test holds their read ends open, so writes block once they are full.
        let unreadOut = try Self.unreadPipe(), unreadErr = try Self.unreadPipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.airlock)
        process.arguments = ["run", "--root", sandbox.root.path]
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("AIRLOCK_TEST_") { environment.removeValue(forKey: key) }
        environment["NOTIFY_SOCKET"] = socket.path
        environment["WATCHDOG_USEC"] = "400000"
        process.environment = environment
        process.standardOutput = unreadOut
        process.standardError = unreadErr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var received: [String] = []
        try #require(waitFor(seconds: 20) {
            received += socket.messages()
            return received.contains("READY=1")
        })
        // Each drop writes a log line and an event (over 150 bytes each): far more than the 4 KiB each pipe holds.
        let count = 120
        for index in 0..<count { try sandbox.drop(Samples.validZip, as: "drop-with-a-long-name-to-fill-the-log-\(index).zip") }
        expect(waitFor(seconds: 600) {
            received += socket.messages()
            return ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count) ?? 0) == count
        })
        var after: [String] = []
        expect(waitFor(seconds: 5) {
            after += socket.messages()
            return after.filter { $0 == "WATCHDOG=1" }.count >= 2
        }, "the watchdog goes on with both streams full")
        kill(process.processIdentifier, SIGTERM)
        // What is queued gets at most 10 s per stream to be written; nobody reads it.
        expect(waitFor(seconds: 40) { !process.isRunning })
        expectEqual(process.terminationStatus, 0)
        try sandbox.expectInvariants()
    }
}
