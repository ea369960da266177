#if canImport(Glibc)
import Glibc
#endif

/// Human-readable log lines on standard error. Names in them are escaped by the
/// caller; file contents never appear.
public struct Log: Sendable {
    public init() {}

    public func info(_ message: String) { write("airlock: " + message) }
    public func warning(_ message: String) { write("airlock: warning: " + message) }
    public func error(_ message: String) { write("airlock: error: " + message) }

    private func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = Glibc.write(2, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 { if errno == EINTR { continue } else { return } }
                done += n
            }
        }
    }
}

/// JSON Lines on standard output, one per finished drop, flushed as they happen.
public struct EventStream: Sendable {
    public init() {}

    public func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = Glibc.write(1, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 { if errno == EINTR { continue } else { return } }
                done += n
            }
        }
    }
}
