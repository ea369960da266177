import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A real nats-server with JetStream on 127.0.0.1, at a free port, with its own
/// store directory; killed or stopped and started again on the same port and store.
final class NatsServer {
    let port: Int
    let directory: URL
    let configuration: String
    private var process: Process?
    private(set) var starts = 0

    /// - Parameter extra: lines added to the server's configuration (tls, authorization).
    init(in directory: URL, extra: String = "") throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try NatsServer.freePort()
        configuration = directory.appendingPathComponent("nats.conf").path
        let text = """
            listen: 127.0.0.1:\(port)
            jetstream { store_dir: "\(directory.appendingPathComponent("store").path)" }
            \(extra)
            """
        try text.write(toFile: configuration, atomically: true, encoding: .utf8)
        try start()
    }

    deinit { kill() }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound, "no free port on 127.0.0.1")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    var url: String { "nats://127.0.0.1:\(port)" }

    /// Starts the server and waits until it accepts connections.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nats-server")
        process.arguments = ["-c", configuration]
        let log = FileHandle(forWritingAtPath: directory.appendingPathComponent("server.log").path)
            ?? { FileManager.default.createFile(atPath: directory.appendingPathComponent("server.log").path, contents: nil)
                 return FileHandle(forWritingAtPath: directory.appendingPathComponent("server.log").path)! }()
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        starts += 1
        try #require(waitFor(seconds: 20) { self.accepts() }, "nats-server did not listen on \(port)")
    }

    func accepts() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// SIGKILL, as a crash of the server would end it.
    func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }
}

/// `airlock publish` on a sandbox's root, its log in the sandbox's logs.
final class RunningPublisher {
    let process = Process()
    let stderrURL: URL

    init(_ sandbox: Sandbox, label: String = "publisher") throws {
        stderrURL = sandbox.logs.appendingPathComponent("\(label).err")
        if !FileManager.default.fileExists(atPath: stderrURL.path) { FileManager.default.createFile(atPath: stderrURL.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: stderrURL)
        handle.seekToEndOfFile()
        process.executableURL = URL(fileURLWithPath: Binary.airlock)
        process.arguments = ["publish", "--root", sandbox.root.path]
        process.standardError = handle
        process.standardOutput = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit { kill() }

    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() -> Int32 {
        Glibc.kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// What the stream holds, read back by the documented consumer (deploy/nats-consumer.py).
struct StreamContents {
    /// One message as the consumer script prints it with --raw.
    private struct Message: Decodable {
        let sequence: Int
        let subject: String
        let msgID: String
        let payload: String

        enum CodingKeys: String, CodingKey { case sequence, subject, payload, msgID = "msg_id" }
    }

    /// Each message with its payload as the bytes it is (as text) and decoded.
    var messages: [(sequence: Int, subject: String, id: String, text: String, payload: Event)] = []

    static func read(_ server: NatsServer, url: String? = nil, stream: String = "AIRLOCK", extra: [String] = [],
                     durable: String = "check") throws -> StreamContents {
        let output = try python(["--server", url ?? server.url, "--stream", stream, "--durable", durable, "--idle-seconds", "1.5", "--raw"] + extra)
        var contents = StreamContents()
        for line in output.split(separator: "\n") {
            let message = try JSONDecoder().decode(Message.self, from: Data(line.utf8))
            let payload = try JSONDecoder().decode(Event.self, from: Data(message.payload.utf8))
            contents.messages.append((message.sequence, message.subject, message.msgID, message.payload, payload))
        }
        return contents
    }

    /// Messages the stream holds now (its state, through the same script).
    static func count(_ server: NatsServer, url: String? = nil, stream: String = "AIRLOCK", extra: [String] = []) -> Int {
        struct State: Decodable { let messages: Int }
        guard let output = try? python(["--server", url ?? server.url, "--stream", stream, "--info"] + extra),
              let state = try? JSONDecoder().decode(State.self, from: Data(output.utf8)) else { return -1 }
        return state.messages
    }

    static func python(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Binary.repository.appendingPathComponent("deploy/nats-consumer.py").path] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown) }
        return String(decoding: data, as: UTF8.self)
    }
}

extension Sandbox {
    /// Adds a publish.nats section for `server` to the root's airlock.json.
    func configurePublish(_ server: NatsServer, _ extra: [String: Any] = [:]) throws {
        let file = root.appendingPathComponent("airlock.json")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        var nats: [String: Any] = ["servers": [server.url], "stream": "AIRLOCK", "create_stream": true, "instance": "test.host"]
        for (key, value) in extra { nats[key] = value }
        config["publish"] = ["nats": nats]
        try JSONSerialization.data(withJSONObject: config).write(to: file)
    }

    /// The records `airlock events` prints that the publisher sends: each message
    /// id with its line as printed and parsed.
    func publishedEvents() throws -> [(id: String, text: String, line: Event)] {
        let events = try airlock(["events", "--root", root.path])
        return try events.stdout.split(separator: "\n").compactMap { text in
            let event = try JSONDecoder().decode(Event.self, from: Data(text.utf8))
            guard [.accepted, .rejected, .released, .purged, .deferred].contains(event.kind), let id = event.id else { return nil }
            return (id + ":" + event.kind.rawValue, String(text), event)
        }
    }

    /// Drops `count` ZIPs (every fifth hostile) by rename, as producers do.
    func flood(_ count: Int, prefix: String) throws -> [String] {
        var names: [String] = []
        for index in 0..<count {
            let name = "\(prefix)-\(index).zip"
            let temporary = inbox.appendingPathComponent(".\(name).tmp")
            try (index % 5 == 0 ? Samples.traversalZip : Samples.validZip).write(to: temporary)
            expectEqual(rename(temporary.path, inbox.appendingPathComponent(name).path), 0)
            names.append(name)
        }
        return names
    }
}

/// The stream holds exactly `expected` (message id → events line): sequences 1…N
/// without a gap, each id once, each payload the line `airlock events` prints.
func expectStream(_ contents: StreamContents, holds expected: [(id: String, text: String, line: Event)],
                  sourceLocation: SourceLocation = #_sourceLocation) -> (duplicates: Int, missing: Int) {
    let ids = contents.messages.map(\.id)
    let duplicates = ids.count - Set(ids).count
    let missing = Set(expected.map(\.id)).subtracting(ids).count
    expectEqual(duplicates, 0, "message ids stored twice: \(duplicates)", sourceLocation: sourceLocation)
    expectEqual(missing, 0, "outcomes missing from the stream: \(missing)", sourceLocation: sourceLocation)
    expectEqual(Set(ids), Set(expected.map(\.id)), sourceLocation: sourceLocation)
    expectEqual(contents.messages.map(\.sequence), Array(1...max(1, contents.messages.count)).prefix(contents.messages.count).map { $0 },
            "stream sequences are not 1…N", sourceLocation: sourceLocation)
    let lines = Dictionary(expected.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    for message in contents.messages {
        let line = lines[message.id]?.line
        expectEqual(message.text, lines[message.id]?.text, "payload of \(message.id) is not its events line, byte for byte",
                sourceLocation: sourceLocation)
        expectEqual(message.payload, line, sourceLocation: sourceLocation)
        expectEqual(message.subject, "airlock.test%2Ehost." + (line?.kind.rawValue ?? "?"), sourceLocation: sourceLocation)
    }
    return (duplicates, missing)
}
