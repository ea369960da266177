import AirlockEvents
import AirlockSystem
import Foundation

/// Group commit for the journal: lines appended by several workers at once go
/// out in one write and one fsync, and each caller returns only once the fsync
/// that covers its own line has returned.
///
/// A caller queues its line, then either finds it written by a peer or writes
/// the whole queue itself. A batch is one write of every queued line followed
/// by one fsync of the file they went into, and its result, success or the
/// error, is the result of every line in it. No caller counts on an fsync made
/// through another descriptor after its own write failed: the kernel reports a
/// writeback error once per open file, so a later fsync elsewhere may return 0
/// for pages that were lost.
///
/// Lines leave in the order they were queued; a worker's records of one drop
/// are appended one after another, so they stay in order.
final class JournalBatch: Sendable {
    private struct State {
        var queued: [(ticket: UInt64, line: [UInt8])] = []
        var finished: [UInt64: Result<Void, SystemError>] = [:]
        var taken: UInt64 = 0
        var writing = false
        var written: UInt64 = 0
    }

    /// What a caller does next: return its batch's result, or lead the next batch.
    private enum Step: Sendable {
        case done(Result<Void, SystemError>)
        case lead(lines: [[UInt8]], tickets: [UInt64])
    }

    private let state = Monitor(State())

    /// Batches written so far: fewer than the lines appended when grouped.
    var batches: UInt64 {
        state.read { $0.written }
    }

    /// Queues `line` and returns once a batch holding it is durable.
    /// - Parameter write: writes the lines of one batch, in order, and fsyncs them;
    ///   run by whichever caller leads that batch.
    /// - Throws: the error of the batch that held the line.
    func append(_ line: [UInt8], write: ([[UInt8]]) throws(SystemError) -> Void) throws(SystemError) {
        // Waiters wait for a batch to end: queueing a line, or starting a batch, ends
        // no wait and wakes nobody; only a batch's end wakes them all.
        let ticket = state.withLock(waking: .none) { state in
            state.taken += 1
            state.queued.append((state.taken, line))
            return state.taken
        }
        while true {
            let step = state.withLock(when: { $0.finished[ticket] != nil || !$0.writing }, waking: .none) { state, _ -> Step in
                if let result = state.finished.removeValue(forKey: ticket) { return .done(result) }
                state.writing = true
                let batch = state.queued
                state.queued.removeAll()
                return .lead(lines: batch.map(\.line), tickets: batch.map(\.ticket))
            }
            switch step {
            case .done(let result):
                try result.get()
                return
            case .lead(let lines, let tickets):
                let result = Result { () throws(SystemError) in try write(lines) }
                state.withLock { state in
                    for ticket in tickets { state.finished[ticket] = result }
                    state.writing = false
                    state.written += 1
                }
            }
        }
    }
}
