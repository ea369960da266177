import AirlockPolicy
import AirlockSystem
import Synchronization

/// A client of clamd (ClamAV's scanning daemon) over its local socket. Each file
/// is scanned on a connection of its own with `zFILDES`: the open descriptor is
/// passed (SCM_RIGHTS), so clamd reads exactly the bytes staging holds, whatever
/// the file's mode or owner, and no path is ever named. Every exchange is bounded
/// by the configured timeout.
public struct ClamdClient: Sendable {
    package let socketPath: String
    let timeoutSeconds: Int64

    /// What clamd said of one file.
    public enum Answer: Equatable, Sendable {
        case clean
        case found(signature: String)
    }

    /// Replies are short ("fd[12]: Eicar-Signature FOUND"); anything longer is not clamd.
    static let replyLimit = 4096

    /// Scans one open file.
    ///
    /// - Throws: `ClamdFailure` when clamd cannot be reached, does not answer in
    ///   time, or answers with an error (a limit of its own, a read failure).
    package func scan(_ file: FileDescriptor) throws(ClamdFailure) -> Answer {
        let reply = try exchange { (socket) throws(SystemError) in
            try socket.send(Array("zFILDES\0".utf8))
            try socket.send(passing: file)
        }
        return try ClamdClient.parse(reply)
    }

    /// `zPING`: whether clamd answers `PONG` in time.
    package func ping() throws(ClamdFailure) {
        let reply = try exchange { (socket) throws(SystemError) in try socket.send(Array("zPING\0".utf8)) }
        guard reply == "PONG" else { throw ClamdFailure("clamd answered PING with \"\(reply)\"") }
    }

    private func exchange(_ request: (borrowing LocalSocket) throws(SystemError) -> Void) throws(ClamdFailure) -> String {
        let deadline = monotonicNanoseconds() + UInt64(timeoutSeconds) * 1_000_000_000
        do {
            let socket = try LocalSocket(connectingTo: socketPath)
            try request(socket)
            let bytes = try socket.receive(until: 0, limit: ClamdClient.replyLimit, deadline: deadline)
            return String(decoding: bytes, as: UTF8.self)
        } catch where error.errno == .timedOut {
            throw ClamdFailure("clamd at \(socketPath) did not answer within \(timeoutSeconds) seconds")
        } catch {
            throw ClamdFailure("clamd at \(socketPath): \(error)")
        }
    }

    /// Parses a FILDES reply: `fd[N]: OK`, `fd[N]: NAME FOUND` or `... ERROR`.
    public static func parse(_ reply: String) throws(ClamdFailure) -> Answer {
        guard let colon = reply.range(of: ": ") else { throw ClamdFailure("clamd answered \"\(reply)\"") }
        let verdict = reply[colon.upperBound...]
        if verdict == "OK" { return .clean }
        if verdict.hasSuffix(" FOUND") {
            let signature = String(verdict.dropLast(" FOUND".count))
            guard !signature.isEmpty else { throw ClamdFailure("clamd answered \"\(reply)\"") }
            return .found(signature: signature)
        }
        throw ClamdFailure("clamd answered \"\(reply)\"")
    }
}

/// clamd could not give an answer: scanning is down and drops wait.
public struct ClamdFailure: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Whether scanning worked the last time it was tried, for the metric and the
/// log: a change is logged once, not on every drop.
public final class ScanHealth: Sendable {
    public static let shared = ScanHealth()

    private struct State {
        var configured = false
        var up = true
        var failures: Int64 = 0
    }

    private let state = Mutex(State())

    /// Records an outcome; true when it changes whether scanning is up.
    package func record(up: Bool) -> Bool {
        state.withLock { state in
            state.configured = true
            if !up { state.failures += 1 }
            defer { state.up = up }
            return state.up != up
        }
    }

    /// Prometheus lines, empty when scanning was never tried.
    public var metricLines: [String] {
        let current = state.withLock { $0 }
        guard current.configured else { return [] }
        return [
            "# HELP airlock_scan_up Whether the last virus scan got an answer from clamd (0: scanning is down, drops wait).",
            "# TYPE airlock_scan_up gauge",
            "airlock_scan_up \(current.up ? 1 : 0)",
            "# HELP airlock_scan_failures_total Virus scans that got no answer from clamd.",
            "# TYPE airlock_scan_failures_total counter",
            "airlock_scan_failures_total \(current.failures)",
        ]
    }
}
