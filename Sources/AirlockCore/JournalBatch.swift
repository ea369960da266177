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
final class JournalBatch: @unchecked Sendable {  // all state under `condition`
    private let condition = NSCondition()
    private var queued: [(ticket: UInt64, line: [UInt8])] = []
    private var finished: [UInt64: Result<Void, SystemError>] = [:]
    private var taken: UInt64 = 0
    private var writing = false
    private var written: UInt64 = 0

    /// Batches written so far: fewer than the lines appended when grouped.
    var batches: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return written
    }

    /// Queues `line` and returns once a batch holding it is durable.
    /// - Parameter write: writes the lines of one batch, in order, and fsyncs them;
    ///   run by whichever caller leads that batch.
    /// - Throws: the error of the batch that held the line.
    func append(_ line: [UInt8], write: ([[UInt8]]) throws(SystemError) -> Void) throws(SystemError) {
        condition.lock()
        taken += 1
        let ticket = taken
        queued.append((ticket, line))
        while finished[ticket] == nil {
            if writing {
                condition.wait()
                continue
            }
            writing = true
            let batch = queued
            queued.removeAll()
            condition.unlock()
            let result = Result { () throws(SystemError) in try write(batch.map(\.line)) }
            condition.lock()
            for entry in batch { finished[entry.ticket] = result }
            writing = false
            written += 1
            condition.broadcast()
        }
        let result = finished.removeValue(forKey: ticket)!
        condition.unlock()
        try result.get()
    }
}
