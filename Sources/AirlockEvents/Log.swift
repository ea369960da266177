import AirlockSystem
import AirlockText

/// Human-readable log lines on standard error, one line per event. Names in them
/// are escaped by the caller; invisible scalars (bidirectional controls and the
/// like, see `DisplayText`) are escaped here in the whole line, whoever put them
/// there; file contents never appear.
public struct Log: Sendable {
    /// Under systemd each line starts with its sd-daemon(3) priority (`<3>` error,
    /// `<4>` warning, `<6>` info), which journald strips and records, so that
    /// `journalctl -p warning` finds the warnings; elsewhere the words say it.
    static let toJournal = standardErrorIsJournal()

    public init() {}

    public func info(_ message: String) { write(6, "airlock: " + message) }
    public func warning(_ message: String) { write(4, "airlock: warning: " + message) }
    public func error(_ message: String) { write(3, "airlock: error: " + message) }

    private func write(_ priority: Int, _ line: String) {
        // One event, one line: a message that carries an error's own newlines would
        // otherwise become several journal entries without a priority.
        let flat = DisplayText.escaping(line.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " "))
        let text = (Log.toJournal ? "<\(priority)>" : "") + flat + "\n"
        OutputBuffer.log.put(text)
    }
}

/// JSON Lines on standard output, one per finished drop, written as they happen.
public struct EventStream: Sendable {
    public init() {}

    public func emit(_ line: String) {
        // With standard output closed (EPIPE, SIGPIPE ignored) or not read the
        // intake carries on: the journal, outbox, quarantine and reports are the record.
        OutputBuffer.events.put(line + "\n")
    }
}
