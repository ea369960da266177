import AirlockSystem
import Foundation
import Synchronization

/// Lines for standard output or standard error, written by a thread of their own
/// so that no reader can stall the intake: a worker, the dispatcher or the
/// watchdog never waits on a pipe or a terminal that is not being read.
///
/// The buffer is bounded. When it is full, a line is dropped rather than waited
/// for, and counted (`dropped`, a metric); the first drop of an episode is said
/// once on standard error, and so is its end, when the writer has caught up. An
/// event dropped from standard output is still in the journal, which is the record.
///
/// Until `startWriting` (and wherever its thread cannot be started) lines are
/// written at once by the caller, as a short command wants them.
public final class OutputBuffer: Sendable {
    /// Standard output: the JSON Lines events.
    public static let events = OutputBuffer(descriptor: 1, what: "events on standard output")
    /// Standard error: the log.
    public static let log = OutputBuffer(descriptor: 2, what: "log lines on standard error")

    /// The most bytes waiting to be written, per stream.
    static let limitBytes: Int = {
        #if DEBUG
        // Test-only: a smaller buffer, so that a test fills it with fewer drops.
        if let text = ProcessInfo.processInfo.environment["AIRLOCK_TEST_OUTPUT_BUFFER_BYTES"], let bytes = Int(text) { return bytes }
        #endif
        return 1 << 20
    }()

    private struct State: Sendable {
        var lines: [[UInt8]] = []
        var bytes = 0
        var writing = false
        var inFlight = false
        var droppedInEpisode = 0
    }

    private let descriptor: Int32
    private let what: String
    private let state = Monitor(State())
    private let droppedTotal = Atomic<Int64>(0)

    private init(descriptor: Int32, what: String) {
        self.descriptor = descriptor
        self.what = what
    }

    /// Lines dropped because the stream's reader did not keep up, since the start.
    public var dropped: Int64 { droppedTotal.load(ordering: .relaxed) }

    /// Starts the writer thread; false (lines still written by their callers) when it cannot be started.
    @discardableResult
    public func startWriting() -> Bool {
        guard state.withLock({ state -> Bool in
            guard !state.writing else { return false }
            state.writing = true
            return true
        }) else { return true }
        do {
            try SystemThread.start(stackSize: 256 << 10) { [self] in write() }
            return true
        } catch {
            state.withLock { $0.writing = false }
            return false
        }
    }

    /// Queues `text`; written at once when no writer thread runs.
    public func put(_ text: String) {
        let bytes = Array(text.utf8)
        enum Step { case direct, queued, dropped(first: Bool) }
        let step = state.withLock { state -> Step in
            guard state.writing else { return .direct }
            guard state.bytes + bytes.count <= Self.limitBytes else {
                state.droppedInEpisode += 1
                return .dropped(first: state.droppedInEpisode == 1)
            }
            state.lines.append(bytes)
            state.bytes += bytes.count
            return .queued
        }
        switch step {
        case .direct:
            // A line that cannot be written is dropped: there is nowhere to report it.
            try? FileDescriptor(rawValue: descriptor).writeAll(bytes)
        case .queued:
            break
        case .dropped(let first):
            droppedTotal.add(1, ordering: .relaxed)
            if first && descriptor != 2 {
                Log().warning("\(what) are not being read: they are dropped until the reader catches up "
                    + "(the journal keeps every event; airlock_output_dropped_total counts them)")
            }
        }
    }

    /// Waits until every queued line is written, or `seconds` have passed: a
    /// reader that never reads does not keep the process from exiting.
    public func drain(seconds: Double) {
        state.withLock(when: { $0.lines.isEmpty && !$0.inFlight }, until: Date(timeIntervalSinceNow: seconds)) { _, _ in }
    }

    private func write() {
        while true {
            let (lines, ended) = state.withLock(when: { !$0.lines.isEmpty }) { state, _ -> ([[UInt8]], Int) in
                defer {
                    state.lines.removeAll(keepingCapacity: true)
                    state.bytes = 0
                    state.inFlight = true
                }
                let ended = state.droppedInEpisode
                state.droppedInEpisode = 0
                return (state.lines, ended)
            }
            for line in lines { try? FileDescriptor(rawValue: descriptor).writeAll(line) }
            state.withLock { $0.inFlight = false }
            if ended > 0 && descriptor != 2 {
                Log().info("\(what) are read again; \(ended) were dropped while they were not")
            }
        }
    }
}
