import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real clamd (Debian's clamav-daemon) run by a test in the foreground with a
/// private configuration, its socket beside the test's root and a signature
/// database the test writes: MD5 hashes of the EICAR string and of a file of our
/// own. No network, no freshclam.
final class Clamd {
    static let program = "/usr/sbin/clamd"
    static var installed: Bool { FileManager.default.isExecutableFile(atPath: program) }
    /// A file no real scanner knows, detected by our own signature.
    static let ownSample = Data("airlock test signature: this file is harmless but marked\n".utf8)

    let directory: URL
    var socketURL: URL { directory.appendingPathComponent("clamd.sock") }
    private var process: Process?

    /// - Parameter settings: more clamd.conf lines (its limits, say).
    init(in sandbox: Sandbox, settings: String = "") throws {
        directory = sandbox.logs.appendingPathComponent("clamd")
        let database = directory.appendingPathComponent("db")
        try FileManager.default.createDirectory(at: database, withIntermediateDirectories: true)
        let lines = [(ContentFiles.eicar, "Airlock-Test-EICAR"), (Clamd.ownSample, "Airlock-Test-Own")].map { data, name in
            "\(Clamd.md5(data)):\(data.count):\(name)"
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: database.appendingPathComponent("airlock-test.hdb"))
        let config = """
            LocalSocket \(socketURL.path)
            LocalSocketMode 600
            DatabaseDirectory \(database.path)
            TemporaryDirectory \(directory.path)
            LogFile \(directory.appendingPathComponent("clamd.log").path)
            Foreground yes
            AlertExceedsMax yes
            MaxThreads 4
            \(settings)
            """
        try Data(config.utf8).write(to: directory.appendingPathComponent("clamd.conf"))
    }

    deinit { stop() }

    /// Starts clamd and waits until it answers on its socket.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Clamd.program)
        process.arguments = ["--foreground", "--config-file=\(directory.appendingPathComponent("clamd.conf").path)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let up = waitFor(seconds: 60) { Clamd.ping(self.socketURL.path) }
        try #require(up, "clamd did not answer PING within a minute")
    }

    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        self.process = nil
        try? FileManager.default.removeItem(at: socketURL)
    }

    static func md5(_ data: Data) -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("airlock-md5-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try? data.write(to: url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/md5sum")
        process.arguments = [url.path]
        let out = Pipe()
        process.standardOutput = out
        try? process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(32))
    }

    /// Whether something at `path` answers zPING with PONG.
    static func ping(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0, send(fd, "zPING\0", 6, Int32(MSG_NOSIGNAL)) == 6 else { return false }
        var reply = [UInt8](repeating: 0, count: 16)
        let n = recv(fd, &reply, reply.count, 0)
        return n >= 4 && Array(reply[0..<4]) == Array("PONG".utf8)
    }
}

/// A local socket that accepts connections and never answers: a clamd that hangs.
final class SilentSocketServer {
    let path: String
    private let fd: Int32
    var descriptor: Int32 { fd }

    init(path: String) {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        expect(bound == 0 && listen(fd, 64) == 0, "cannot listen on \(path)")
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }
}

/// A local socket whose every connection gets one fixed reply: a clamd that
/// answers with an error.
final class ReplyingSocketServer: @unchecked Sendable {
    private let listener: SilentSocketServer
    private let reply: String

    init(path: String, reply: String) {
        listener = SilentSocketServer(path: path)
        self.reply = reply
        let fd = listener.descriptor
        Thread.detachNewThread { [reply] in
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                // The whole request ("zFILDES\0" and the byte carrying the descriptor) before the reply.
                var request = [UInt8](repeating: 0, count: 64)
                var got = 0
                while got < 9 {
                    let n = recv(connection, &request, request.count, 0)
                    if n <= 0 { break }
                    got += n
                }
                _ = send(connection, reply + "\0", reply.utf8.count + 1, Int32(MSG_NOSIGNAL))
                close(connection)
            }
        }
    }
}

@Suite("Content: virus scanning through a real clamd", .enabled(if: Clamd.installed, "clamd (Debian's clamav-daemon) is not installed"))
struct ClamdTests {
    func sandbox(timeout: Int = 10, clamdSettings: String = "") throws -> (Sandbox, Clamd) {
        let sandbox = try Sandbox()
        let clamd = try Clamd(in: sandbox, settings: clamdSettings)
        try sandbox.initialise()
        try sandbox.configure("scan", ["clamd_socket": clamd.socketURL.path, "timeout_seconds": timeout])
        return (sandbox, clamd)
    }

    @Test("a clean drop is scanned and accepted; EICAR among clean files is malware-found naming the signature and entry")
    func cleanAndInfected() throws {
        let (sandbox, clamd) = try sandbox()
        try clamd.start()
        let text = try ContentFiles.sample("text").data, pdf = try ContentFiles.sample("pdf").data
        try sandbox.drop(try ContentFiles.archive("zip", [("a.txt", text), ("docs/b.pdf", pdf)]), as: "clean.zip")
        let clean = try sandbox.runOnce()
        expectEqual(clean.events.first?.kind, .accepted, "\(clean.events) \(clean.stderr)")
        try expectEqual(sandbox.listing(sandbox.outbox), ["clean/", "clean/a.txt", "clean/docs/", "clean/docs/b.pdf"])
        try FileManager.default.removeItem(at: sandbox.outbox.appendingPathComponent("clean"))

        let infected = try ContentFiles.archive("zip", [("a.txt", text), ("docs/eicar.com", ContentFiles.eicar), ("z.pdf", pdf)])
        try sandbox.drop(infected, as: "infected.zip")
        let report = try sandbox.expectRejected(try sandbox.runOnce(), "malware-found", entry: "docs/eicar.com", original: infected)
        expect((report?.detail ?? "").contains("Airlock-Test-EICAR"), "\(String(describing: report))")
    }

    @Test("a signature of our own is found in a tar drop too")
    func ownSignature() throws {
        let (sandbox, clamd) = try sandbox()
        try clamd.start()
        let archive = try ContentFiles.archive("tar", [("readme.txt", try ContentFiles.sample("text").data), ("marked.bin", Clamd.ownSample)])
        try sandbox.drop(archive, as: "marked.tar")
        let report = try sandbox.expectRejected(try sandbox.runOnce(), "malware-found", entry: "marked.bin", original: archive)
        expect((report?.detail ?? "").contains("Airlock-Test-Own"), "\(String(describing: report))")
    }

    @Test("a file past clamd's own MaxFileSize is never passed half-scanned: with AlertExceedsMax it is malware-found")
    func clamdLimits() throws {
        let (sandbox, clamd) = try sandbox(clamdSettings: "MaxFileSize 1M\nMaxScanSize 4M\n")
        try clamd.start()
        // Random bytes: incompressible, so the ratio rule stays out of it. Read whole
        // from the kernel: a random number per byte cost a second in a debug build.
        let urandom = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        let big = try #require(try urandom.read(upToCount: 2 << 20))
        try urandom.close()
        try #require(big.count == 2 << 20)
        let archive = try ContentFiles.archive("zip", [("a.txt", try ContentFiles.sample("text").data), ("big.txt", big)])
        try sandbox.drop(archive, as: "big.zip")
        let report = try sandbox.expectRejected(try sandbox.runOnce(), "malware-found", entry: "big.txt", original: archive)
        expect((report?.detail ?? "").contains("Heuristics.Limits.Exceeded"), "\(String(describing: report))")
    }

    @Test("clamd stopped mid-run defers the drops (never accepted unscanned); the daemon accepts them once clamd is back", .needsLeases)
    func clamdStopped() throws {
        let (sandbox, clamd) = try sandbox()
        try sandbox.configure("watch", ["retry_max_seconds": 2])
        try sandbox.configure("metrics", ["interval_seconds": 1])
        try clamd.start()
        let daemon = try RunningDaemon(sandbox)
        let text = try ContentFiles.sample("text").data
        try sandbox.drop(try ContentFiles.archive("zip", [("a.txt", text)]), as: "first.zip")
        expectEqual(daemon.waitForVerdicts(1).first?.kind, .accepted)
        clamd.stop()
        for name in ["second", "third"] {
            try sandbox.drop(try ContentFiles.archive("zip", [("\(name).txt", text)]), as: "\(name).zip")
        }
        expect(waitFor(seconds: 30) { daemon.events.filter { $0.kind == .deferred }.count >= 2 })
        try expectEqual(sandbox.listing(sandbox.outbox), ["first/", "first/a.txt"], "nothing was accepted unscanned")
        let metrics = sandbox.root.appendingPathComponent("metrics/airlock.prom")
        expect(waitFor(seconds: 10) { ((try? String(contentsOf: metrics, encoding: .utf8)) ?? "").contains("airlock_scan_up 0") })
        expect(daemon.stderr.contains("virus scanning is down"), "\(daemon.stderr)")
        let status = try airlock(["status", "--root", sandbox.root.path])
        expect(status.stdout.split(separator: "\n").contains { $0.hasPrefix("scanning:") && $0.contains("DOWN") }, "\(status.stdout)")
        let doctor = try airlock(["doctor", "--root", sandbox.root.path])
        expect(doctor.stdout.split(separator: "\n").contains { $0.hasPrefix("scanning:") && $0.contains("DOWN") }, "\(doctor.stdout)")

        try clamd.start()
        let verdicts = daemon.waitForVerdicts(3)
        expectEqual(verdicts.map { $0.kind.rawValue }, ["accepted", "accepted", "accepted"], "\(verdicts)")
        try expectEqual(sandbox.listing(sandbox.outbox), ["first/", "first/a.txt", "second/", "second/second.txt", "third/", "third/third.txt"])
        expect(waitFor(seconds: 10) { ((try? String(contentsOf: metrics, encoding: .utf8)) ?? "").contains("airlock_scan_up 1") })
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
        try sandbox.expectInvariants()
    }

    @Test("a clamd that answers with an error defers the drop; it is never accepted unscanned")
    func clamdError() throws {
        let (sandbox, clamd) = try sandbox()
        let server = ReplyingSocketServer(path: clamd.socketURL.path, reply: "fd[9]: Can't open file or directory ERROR")
        try sandbox.drop(try ContentFiles.archive("zip", [("a.txt", try ContentFiles.sample("text").data)]), as: "waits.zip")
        let result = try sandbox.runOnce()
        expectEqual(result.status, 75, "\(result.stderr)")
        let event = try #require(result.events.first)
        expectEqual(event.kind, .deferred, "\(event)")
        expect((event.detail ?? "").contains("Can't open file or directory ERROR"), "\(event)")
        try expectEqual(sandbox.listing(sandbox.outbox), [])
        try expectEqual(sandbox.listing(sandbox.staging), [])
        try expect(sandbox.listing(sandbox.claimed).contains { $0.hasSuffix("/drop") })
        withExtendedLifetime(server) {}
    }

    @Test("a clamd that never answers hits the timeout and the drop is deferred, still claimed")
    func silentClamd() throws {
        let (sandbox, clamd) = try sandbox(timeout: 2)
        let server = SilentSocketServer(path: clamd.socketURL.path)
        try sandbox.drop(try ContentFiles.archive("zip", [("a.txt", try ContentFiles.sample("text").data)]), as: "waits.zip")
        let started = Date()
        let result = try sandbox.runOnce()
        expect(Date().timeIntervalSince(started) < 30)
        expectEqual(result.status, 75, "\(result.stderr)")
        let event = try #require(result.events.first)
        expectEqual(event.kind, .deferred, "\(event)")
        expect((event.detail ?? "").contains("did not answer within 2 seconds"), "\(event)")
        try expectEqual(sandbox.listing(sandbox.outbox), [])
        try expectEqual(sandbox.listing(sandbox.staging), [])
        try expect(sandbox.listing(sandbox.claimed).contains { $0.hasSuffix("/drop") })
        withExtendedLifetime(server) {}
    }
}
