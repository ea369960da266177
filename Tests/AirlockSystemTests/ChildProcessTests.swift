import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("A child held by its pidfd: waited for through it, never signalled once gone, its descriptors released")
struct ChildProcessTests {
    /// Spawns `/bin/sh -c script` with standard input from /dev/null and standard
    /// output into a pipe; returns the child and the pipe's read end (the caller closes it).
    static func shell(_ script: String) throws -> (ChildProcess, FileDescriptor) {
        let pipe = try makePipe()
        let child = try pipe.write.closeAfter { (write) throws(SystemError) in
            try ChildProcess.spawn("/bin/sh", arguments: ["-c", script], environment: ["PATH=/usr/bin:/bin"],
                                   descriptors: [.nullInput(0), .inherit(write, as: 1)])
        }
        return (child, pipe.read)
    }

    /// Everything the pipe holds until every writer has closed it; nil if that
    /// takes longer than ten seconds (a writer's copy was left open).
    static func readToEnd(_ fd: FileDescriptor) throws -> [UInt8]? {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while true {
            guard try waitReadable(fd, milliseconds: 10_000) else { return nil }
            let n = try chunk.withUnsafeMutableBytes { buffer in try fd.read(into: buffer) }
            if n == 0 { return output }
            output += chunk[0..<n]
        }
    }

    @Test("a descriptor of this process opened without O_CLOEXEC (as Foundation's file writes are) is not the child's")
    func descriptorsWithoutCloseOnExecStayBehind() throws {
        let scratch = try Scratch("spawn-fds")
        let opened = open(scratch.path + "/written", O_WRONLY | O_CREAT, 0o600)
        try #require(opened >= 0)
        // Moved to 100 or above (F_DUPFD, so still not close-on-exec): a low number
        // could be the one ls itself opens to read /proc/self/fd.
        let leaky = fcntl(opened, F_DUPFD, 100)
        close(opened)
        try #require(leaky >= 100)
        defer { close(leaky) }
        let (child, output) = try Self.shell("ls /proc/self/fd")
        defer { output.close() }
        defer { child.close() }
        let listed = try #require(try Self.readToEnd(output))
        let numbers = String(decoding: listed, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        // 0 and 1 as set up, and the directory ls reads; nothing of this process's.
        expect(!numbers.contains(leaky), "the child holds descriptor \(leaky): \(numbers)")
        expect(numbers.contains(0) && numbers.contains(1))
        try expectEqual(child.wait().termination, .exited(0))
    }

    @Test func waitGivesTheExitStatusAndTheOutputEnds() throws {
        let (child, output) = try Self.shell("echo hello; exit 7")
        defer { output.close() }
        defer { child.close() }
        // EOF arrives only if the copy of the write end lifted for the spawn was closed here.
        try expectEqual(Self.readToEnd(output), Array("hello\n".utf8))
        let (termination, maxRSS) = try child.wait()
        expectEqual(termination, .exited(7))
        expect(maxRSS > 0)
    }

    @Test func aSignalReachesARunningChild() throws {
        let (child, output) = try Self.shell("exec sleep 30")
        defer { output.close() }
        defer { child.close() }
        expect(child.signal(.terminate))
        try expectEqual(child.wait().termination, .signalled(Signal.terminate.rawValue))
    }

    @Test func aReapedChildIsNeverSignalled() throws {
        let (child, output) = try Self.shell("exit 0")
        defer { output.close() }
        defer { child.close() }
        try expectEqual(child.wait().termination, .exited(0))
        // Its pid is free for reuse now; through the pidfd the kernel answers ESRCH.
        expect(!child.signal(.kill))
        expect(!child.signal(.terminate))
    }

    /// Whether this process may choose the next pid: the kernel takes a write to
    /// ns_last_pid only with CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE, whatever the
    /// file's mode says (some kernels show it 0666), so access(2) cannot tell.
    static let canChooseNextPid: Bool = {
        guard FileManager.default.fileExists(atPath: "/proc/sys/kernel/ns_last_pid"),
              let capabilities = try? Capabilities.current() else { return false }
        return capabilities.holds(21) || capabilities.holds(40)
    }()

    @Test(.enabled(if: canChooseNextPid, "needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE (root) to write /proc/sys/kernel/ns_last_pid and so make the kernel reuse a pid"))
    func aReusedPidIsNotReachedThroughTheReapedChildsHandle() throws {
        // Another process may take the freed pid first (the tests run in parallel): try a few times.
        for _ in 0..<20 {
            let (gone, goneOutput) = try Self.shell("exit 0")
            defer { goneOutput.close() }
            defer { gone.close() }
            _ = try gone.wait()
            try "\(gone.pid - 1)".write(toFile: "/proc/sys/kernel/ns_last_pid", atomically: false, encoding: .utf8)
            let (successor, successorOutput) = try Self.shell("exec sleep 30")
            defer { successorOutput.close() }
            defer { successor.close() }
            guard successor.pid == gone.pid else {
                successor.signal(.kill)
                _ = try successor.wait()
                continue
            }
            // kill(pid) would now reach the successor; the reaped child's pidfd reaches nobody.
            expect(!gone.signal(.kill))
            expect(successor.signal(.terminate))
            try expectEqual(successor.wait().termination, .signalled(Signal.terminate.rawValue))
            return
        }
        Issue.record("the kernel never handed the freed pid to the next child in 20 attempts")
    }

    @Test func closingReleasesThePidfdAndSignalsNothingAfter() throws {
        let (child, output) = try Self.shell("exec sleep 30")
        defer { output.close() }
        let number = try #require(child.descriptorNumber)
        expectEqual(Self.pidfdOwner(number), child.pid)
        expect(child.signal(.kill))
        _ = try child.wait()
        child.close()
        expectEqual(child.descriptorNumber, nil)
        expect(Self.pidfdOwner(number) != child.pid)
        expect(!child.signal(.kill))
        child.close()  // a second close is harmless
    }

    @Test func aMissingExecutableIsATypedError() throws {
        let error = #expect(throws: SystemError.self) {
            try ChildProcess.spawn("/nonexistent/airlock-decoder", arguments: [], environment: [], descriptors: [])
        }
        expectEqual(error?.operation, "posix_spawn")
        expectEqual(error?.errno, .noEntry)
    }

    /// The pid a descriptor number of this process is a pidfd for, from
    /// /proc/self/fdinfo; nil when the number is closed or is not a pidfd.
    static func pidfdOwner(_ number: Int32) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/self/fdinfo/\(number)", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Pid:") {
            return Int32(line.dropFirst(4).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
