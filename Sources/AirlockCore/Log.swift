import AirlockSystem

/// Human-readable log lines on standard error. Names in them are escaped by the
/// caller; file contents never appear.
public struct Log: Sendable {
    public init() {}

    public func info(_ message: String) { write("airlock: " + message) }
    public func warning(_ message: String) { write("airlock: warning: " + message) }
    public func error(_ message: String) { write("airlock: error: " + message) }
    /// Text as it is, for usage messages.
    public func plain(_ text: String) { write(text) }

    private func write(_ line: String) {
        // A log line that cannot be written is dropped: there is nowhere to report it.
        try? FileDescriptor(rawValue: 2).writeAll(Array((line + "\n").utf8))
    }
}

/// JSON Lines on standard output, one per finished drop, written as they happen.
public struct EventStream: Sendable {
    public init() {}

    public func emit(_ line: String) {
        // With standard output closed (EPIPE, SIGPIPE ignored) the intake carries on:
        // the outbox, quarantine and reports are the record.
        try? FileDescriptor(rawValue: 1).writeAll(Array((line + "\n").utf8))
    }
}
