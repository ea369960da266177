import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `airlock run` (the watcher) started on a sandbox's root, its events read from
/// a file as they come.
final class RunningDaemon {
    let process = Process()
    let stdoutURL: URL
    let stderrURL: URL
    private let stdoutHandle: FileHandle
    private let stderrHandle: FileHandle

    /// - Parameter wrapper: a program and its arguments to run the daemon under
    ///   (given the binary and its arguments after them), as `airlock(_:under:)` takes.
    /// - Parameters:
    ///   - standardOutput: a pipe for the daemon's standard output instead of the events file.
    ///   - executable: the `airlock` to run instead of the built one (a copy installed elsewhere).
    ///   - extra: more arguments for `run` (`--instance NAME`).
    ///   - watching: whether to wait until it says it is watching (a `--once` run never does).
    init(_ sandbox: Sandbox, environment: [String: String] = [:], label: String = "daemon", under wrapper: [String] = [],
         standardOutput: Pipe? = nil, executable: String = Binary.airlock, extra: [String] = [], watching: Bool = true) throws {
        stdoutURL = sandbox.logs.appendingPathComponent("\(label).out")
        stderrURL = sandbox.logs.appendingPathComponent("\(label).err")
        FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        stdoutHandle = try FileHandle(forWritingTo: stdoutURL)
        stderrHandle = try FileHandle(forWritingTo: stderrURL)
        let arguments = ["run", "--root", sandbox.root.path] + extra
        process.executableURL = URL(fileURLWithPath: wrapper.first ?? executable)
        process.arguments = wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [executable] + arguments
        var env = ProcessInfo.processInfo.environment
        for key in env.keys where key.hasPrefix("AIRLOCK_TEST_") { env.removeValue(forKey: key) }
        env.removeValue(forKey: "NOTIFY_SOCKET")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = standardOutput ?? stdoutHandle
        process.standardError = stderrHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        guard watching else { return }
        // A daemon that never gets ready is the test's failure, not a reason to go on.
        try #require(waitFor(seconds: 20) { self.stderr.contains("watching") },
                     "the daemon did not say it was watching within 20 s: \(self.stderr)")
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? stdoutHandle.close()
        try? stderrHandle.close()
    }

    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    /// What `events` has decoded so far, and how many bytes of the events file that was.
    private let decodedLock = NSLock()
    private var decodedEvents: [Event] = []
    private var decodedBytes: UInt64 = 0

    /// The events printed so far, decoded strictly. A line still being written
    /// is left for the next look; any other line that is not an event is an issue.
    /// Each look decodes only the lines added since the last one: tests poll this
    /// every few milliseconds while a daemon works through hundreds of drops, and
    /// decoding every line again each time kept a core busy in the test process.
    var events: [Event] {
        decodedLock.lock()
        defer { decodedLock.unlock() }
        guard let file = try? FileHandle(forReadingFrom: stdoutURL) else { return decodedEvents }
        defer { try? file.close() }
        guard (try? file.seek(toOffset: decodedBytes)) != nil, let added = try? file.readToEnd(),
              let end = added.lastIndex(of: UInt8(ascii: "\n")) else { return decodedEvents }
        let complete = added[added.startIndex...end]
        decodedEvents += Event.lines(String(decoding: complete, as: UTF8.self))
        decodedBytes += UInt64(complete.count)
        return decodedEvents
    }

    /// Waits until `count` final events (accepted or rejected) were printed; a
    /// test issue if they were not, since what follows depends on them.
    @discardableResult
    func waitForVerdicts(_ count: Int, seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) -> [Event] {
        var verdicts: [Event] = []
        let arrived = waitFor(seconds: seconds) {
            verdicts = self.events.filter { $0.kind != .deferred }
            return verdicts.count >= count
        }
        expect(arrived, "\(verdicts.count) of \(count) verdicts within \(seconds) s: \(self.stderr)", sourceLocation: sourceLocation)
        return verdicts
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the daemon to exit; its status, or nil if it did not within `seconds`.
    func waitForExit(seconds: Double) -> Int32? {
        guard waitFor(seconds: seconds, { !self.process.isRunning }) else { return nil }
        return process.terminationStatus
    }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass.
@discardableResult
/// Whether `condition` holds within `seconds`, asked every `interval` seconds and
/// once more at the deadline. A condition that starts a process (`airlock status`,
/// `airlock events`) is asked every quarter second: each ask costs a process
/// start, and at every 20 ms a test's polling would take a core from the daemon
/// it waits for.
func waitFor(seconds: Double, every interval: Double = 0.02, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(UInt32(interval * 1_000_000))
    }
    return condition()
}

/// A plain ustar archive built in memory, for drops of a chosen size.
enum TarBuilder {
    static func archive(_ files: [(name: String, size: Int)], seed: UInt64 = 1) -> Data {
        var out = Data()
        var state = seed
        for file in files {
            var header = [UInt8](repeating: 0, count: 512)
            func put(_ text: String, at offset: Int) {
                for (index, byte) in text.utf8.enumerated() { header[offset + index] = byte }
            }
            put(file.name, at: 0)
            put("0000644\0", at: 100)
            put("0000000\0", at: 108)
            put("0000000\0", at: 116)
            let size = String(file.size, radix: 8)
            put(String(repeating: "0", count: 11 - size.count) + size + "\0", at: 124)
            put("00000000000\0", at: 136)
            put("        ", at: 148)
            header[156] = UInt8(ascii: "0")
            put("ustar\0", at: 257)
            put("00", at: 263)
            let sum = header.reduce(0) { $0 + Int($1) }
            let checksum = String(sum, radix: 8)
            put(String(repeating: "0", count: 6 - checksum.count) + checksum + "\0 ", at: 148)
            out.append(contentsOf: header)
            // Eight bytes of the generator's state at a time, stored whole through a
            // pointer (in a debug build a loop per byte, or a stride iterator, costs
            // seconds for the 192 MiB a test asks for).
            var body = [UInt64](repeating: 0, count: (file.size + 7) / 8)
            body.withUnsafeMutableBufferPointer { words in
                guard var word = words.baseAddress else { return }
                let end = word + words.count
                while word < end {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    word.pointee = state
                    word += 1
                }
            }
            body.withUnsafeBytes { raw in
                if let start = raw.baseAddress { out.append(start.assumingMemoryBound(to: UInt8.self), count: file.size) }
            }
            let padding = (512 - file.size % 512) % 512
            out.append(contentsOf: [UInt8](repeating: 0, count: padding))
        }
        out.append(contentsOf: [UInt8](repeating: 0, count: 1024))
        return out
    }
}

/// A datagram socket standing in for systemd's notification socket.
final class FakeNotifySocket {
    let path: String
    private let fd: Int32

    init(at url: URL) throws {
        path = url.path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    deinit { close(fd) }

    /// Every message received so far.
    func messages() -> [String] {
        var result: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return result }
            result.append(String(decoding: buffer[0..<n], as: UTF8.self))
        }
    }
}
