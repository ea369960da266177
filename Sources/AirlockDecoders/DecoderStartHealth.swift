import AirlockEvents
import AirlockPolicy
import AirlockSystem
import Foundation
import Synchronization

/// Whether decoder children can be started now, for the log, the metrics and
/// `status`. A host out of processes or memory (fork and clone refused with
/// EAGAIN or ENOMEM, a pids cgroup full) is ordinary on a busy server: each drop
/// whose child cannot be started stays claimed and is retried with backoff, and
/// this says so once per episode rather than once per drop, or not at all, and
/// records the episode in `state/decoder-start` for `airlock status` (removed
/// when children start again).
public enum DecoderStartHealth {
    private struct State {
        var failing = false
        var failures: Int64 = 0
        var inEpisode: Int64 = 0
        var last = ""
        /// When an episode was last said, and whether the current one was.
        var lastWarned: UInt64?
        var warned = false
    }

    private static let state = Mutex(State())

    /// At a limit that lets some children through and not others, episodes come
    /// and go with each child; one that begins this soon after the last one was
    /// said is recorded (status, metrics) but not said again.
    static let quietNanoseconds: UInt64 = 30_000_000_000

    /// Decoder children that could not be started or never took their drop, since the start.
    public static var failures: Int64 { state.withLock { $0.failures } }
    /// Whether the last child asked for could not be started.
    public static var failing: Bool { state.withLock { $0.failing } }

    /// A child could not be started, or never took its drop: an episode begins
    /// unless one is under way, recorded in `state/decoder-start` and said once.
    package static func failed(_ detail: String, log: Log, state directory: FileDescriptor) {
        let now = monotonicNanoseconds()
        let (begins, says) = state.withLock { state -> (Bool, Bool) in
            state.failures += 1
            state.inEpisode += 1
            state.last = detail
            guard !state.failing else { return (false, false) }
            state.failing = true
            let says = state.lastWarned.map { now - $0 >= quietNanoseconds } ?? true
            state.warned = says
            if says { state.lastWarned = now }
            return (true, says)
        }
        if begins {
            var json = JSONObjectWriter()
            json.add("since", timestamp())
            json.add("detail", detail)
            // Not synced: a power cut that loses it loses a hint, which the next failure writes again.
            try? directory.replaceAtomically(Array(fileName.utf8), with: Array((json.text + "\n").utf8),
                                             temporary: Array("\(fileName).tmp".utf8), AtomicWriteOptions(mode: 0o600, syncsDirectory: false))
        }
        if says {
            log.warning("decoder children cannot be started (\(detail)); drops stay claimed and are retried with backoff "
                + "until they can ('airlock status' and airlock_decoder_start_failing say so meanwhile)")
        }
    }

    /// A child took its drop: an episode of failures, if one ran, is over.
    package static func started(log: Log, state directory: FileDescriptor) {
        let ended = state.withLock { state -> (count: Int64, said: Bool)? in
            guard state.failing else { return nil }
            defer {
                state.failing = false
                state.inEpisode = 0
            }
            return (state.inEpisode, state.warned)
        }
        guard let ended else { return }
        try? directory.unlink(Array(fileName.utf8))
        if ended.said { log.info("decoder children start again, after \(ended.count) that could not be started") }
    }

    static let fileName = "decoder-start"

    /// The episode the intake of this root last recorded: since when decoder
    /// children cannot be started, and why; nil when none is under way.
    public static func recorded(in state: FileDescriptor) -> (since: String, detail: String)? {
        guard let fd = try? state.open(Array(fileName.utf8), [.readOnly, .noFollow]) else { return nil }
        defer { fd.close() }
        guard let bytes = try? fd.readAll(limit: 64 * 1024),
              let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
              let since = object["since"] as? String, let detail = object["detail"] as? String else { return nil }
        return (since, detail)
    }
}
