import AirlockChild
@testable import AirlockConfiguration
@testable import AirlockDecoders
import AirlockSystem
import Dispatch
import Foundation
import Synchronization
import Testing

@Suite("Decoders started ahead of need: each takes one drop, dies with the launcher, and never outlives a failed hand-over",
       .serialized)
struct DecoderLauncherTests {
    /// The debug build's airlock-decoder, beside the test bundle.
    static let decoder: String = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("airlock-decoder").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/airlock-decoder").path
    }()

    /// Whether `pid` is a process at all (a zombie counts: it was not reaped).
    static func exists(_ pid: Int32) -> Bool {
        FileManager.default.fileExists(atPath: "/proc/\(pid)")
    }

    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return Int32(stat[stat.index(after: close)...].split(separator: " ")[1])
    }

    static let limits = DecoderLimits(addressSpaceBytes: 1 << 31, cpuSeconds: 1, openFiles: 64, fileSizeBytes: 1 << 20)
    /// A probe's request with these limits, as the children read it.
    static let probe: [String] = {
        var configuration = Configuration()
        configuration.decoderConfinementRequired = true
        var request = configuration.decoderRequest(mode: .probe, format: "none")
        request.limits = limits
        return request.encoded
    }()

    @Test("a waiting child is killed and reaped when the launcher stops, and none starts after")
    func stopKillsWaiting() throws {
        let launcher = DecoderLauncher()
        launcher.prepare(Self.decoder, environment: [])
        let pid = try #require(launcher.waitingChild(Self.decoder))
        #expect(Self.parent(of: pid) == CurrentProcess.id)
        launcher.prepare(Self.decoder, environment: [])
        #expect(launcher.waitingCount == 1, "one child per thread and program")
        launcher.stop()
        #expect(!Self.exists(pid), "reaped, not left as a zombie or running")
        launcher.prepare(Self.decoder, environment: [])
        #expect(launcher.waitingCount == 0)
    }

    @Test("a child takes exactly one drop, and its CPU limit counts from the hand-over, not from its start")
    func oneDropAndLimitsFromHandOver() throws {
        let launcher = DecoderLauncher()
        defer { launcher.stop() }
        // The child burns 1.5 s of CPU while waiting: past the 1 s limit if that counted from its start.
        launcher.prepare(Self.decoder, environment: ["AIRLOCK_TEST_WARM_SPIN_MS=1500"])
        let pid = try #require(launcher.waitingChild(Self.decoder))
        let nothing = try FileDescriptor.openDirectory(path: "/")
        defer { nothing.close() }
        let pipe = try makePipe()
        defer { pipe.read.close() }
        let child = try pipe.write.closeAfter { result in
            launcher.handOver(Self.decoder, arguments: DecoderLauncherTests.probe, descriptors: [nothing, nothing, result])
        }
        let handed = try #require(child)
        defer { handed.close() }
        #expect(handed.pid == pid)
        #expect(launcher.waitingChild(Self.decoder) == nil, "taken out: no second drop can reach it")
        let output = String(decoding: try pipe.read.readAll(limit: 1 << 16), as: UTF8.self)
        #expect(try handed.wait().termination == .exited(0), "\(output)")
        let granted = output.firstMatch(of: /"limit_cpu":([0-9]+)/).flatMap { Int64($0.1) }
        #expect((granted ?? 0) >= Self.limits.cpuSeconds + 2, "the limit covers the 1.5 s spent before the hand-over: \(output)")
        #expect(!Self.exists(pid))
    }

    @Test("a waiting child that died is not handed the drop: it is reaped and the caller starts a fresh one")
    func deadChildFallsBack() throws {
        let launcher = DecoderLauncher()
        defer { launcher.stop() }
        launcher.prepare(Self.decoder, environment: [])
        let pid = try #require(launcher.waitingChild(Self.decoder))
        // Not reaped yet, so the pid is still the child's.
        #expect(kill(pid, SIGKILL) == 0)
        let nothing = try FileDescriptor.openDirectory(path: "/")
        defer { nothing.close() }
        let handed = launcher.handOver(Self.decoder, arguments: DecoderLauncherTests.probe, descriptors: [nothing, nothing, nothing])
        #expect(handed == nil)
        #expect(!Self.exists(pid))
        #expect(launcher.waitingCount == 0)
    }

    @Test("a child whose starting thread has ended dies with it, and is reaped when another child is prepared")
    func childDiesWithItsThread() throws {
        let launcher = DecoderLauncher()
        defer { launcher.stop() }
        let started = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            launcher.prepare(Self.decoder, environment: [])
            let pid = launcher.waitingChild(Self.decoder)
            // The thread ends only once the child waits for its drop, so it has set its
            // parent-death signal while this thread was still its parent.
            _ = pid.map { pid in Self.waitFor { Self.waitsForItsDrop(pid) } }
            started.withLock { $0 = pid }
            done.signal()
        }
        thread.start()
        done.wait()
        let pid = try #require(started.withLock { $0 })
        // The parent-death signal follows the thread that started the child.
        #expect(Self.waitFor { Self.state(of: pid) == "Z" }, "the child outlived its thread")
        launcher.prepare(Self.decoder, environment: [])
        #expect(!Self.exists(pid), "the dead child was reaped")
        #expect(launcher.waitingCount == 1)
    }

    static func state(of pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").first.map(String.init)
    }

    /// Whether `pid` is blocked in recvmsg(2), as a child waiting for its hand-over is.
    static func waitsForItsDrop(_ pid: Int32) -> Bool {
        #if arch(x86_64)
        let recvmsg = "47"
        #else
        let recvmsg = "212"
        #endif
        let call = (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?.split(separator: " ").first
        return call.map(String.init) == recvmsg
    }

    static func waitFor(seconds: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
