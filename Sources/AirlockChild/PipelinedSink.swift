import AirlockPolicy
import AirlockSystem

/// A sink that hands every operation, in order, to a thread of its own that
/// performs it on `Inner` (the staging writer), so that the kernel's work of
/// making directories and creating and writing files (most of a decoder's time
/// on many small files) runs on a second core while the scan goes on decoding.
///
/// Staging ends up exactly as the serial writer leaves it: the operations run
/// one at a time, in the order they were handed over, on one thread. The first
/// that fails stops that thread, and none after it is performed, which is where
/// the serial scan would have stopped. The failure reaches the scan at its next
/// hand-over, which throws it, or once the scan is over through `failure`; the
/// caller takes it for the scan's outcome in either case, whatever the scan
/// recorded meanwhile, for everything after the failed operation is what the
/// serial writer's scan would never have read.
///
/// Bounded: at most `maxQueuedBytes` of data, and `maxQueuedOperations`
/// operations, wait at any time (a scan that decodes faster than the thread
/// writes waits for it), so a large entry streams through in chunks and the
/// decoder's memory stays flat: the same for a 90 MiB drop as for a 1 MiB one,
/// which a queue of several MiB would not be. Half a MiB is still about a
/// hundred small files of slack between the two threads.
public struct PipelinedSink<Inner: EntrySink>: EntrySink {
    static var maxQueuedBytes: Int { 512 << 10 }
    static var maxQueuedOperations: Int { 4096 }
    /// Operations gathered on the scan's side before they are handed over under
    /// the lock, so that a small file costs no lock and wake-up of its own.
    static var batchOperations: Int { 32 }
    /// Two of a large file's chunks (a decompressor's block is 128 KiB): the
    /// thread, faster than the scan, sleeps between hand-overs, and each wakes it.
    static var batchBytes: Int { 256 << 10 }
    /// Copies the thread has written, kept for the scan's next chunks: a large
    /// file streams through the same few buffers instead of an allocation each.
    /// A copy is reused only for a chunk at least half its capacity, so that the
    /// copies' memory stays within about twice the bytes the queue counts.
    static var spareBuffers: Int { 8 }
    /// A larger copy (a reader with larger blocks) is let go, not kept.
    static var spareCapacity: Int { 256 << 10 }

    private let shared: Shared
    private var batch: [Operation] = []
    private var batchBytes = 0
    /// Written copies handed back by the thread, for reuse.
    private var spare: [[UInt8]] = []
    private var closed = false

    /// Starts the writing thread with `inner`, which only that thread uses from
    /// here on; nil when no thread could start (a host out of tasks), and the
    /// caller writes on its own thread.
    public init?(_ inner: Inner) {
        let shared = Shared(inner)
        do {
            try SystemThread.start(stackSize: 512 << 10) { shared.run() }
        } catch {
            return nil
        }
        self.shared = shared
        batch.reserveCapacity(Self.batchOperations)
    }

    /// The first operation's failure, once `close()` has returned; nil when
    /// every operation handed over was performed.
    public var failure: SystemError? { shared.state.withLock { $0.failure } }

    /// The inner sink, for its counts, once `close()` has returned.
    public var inner: Inner {
        precondition(closed, "the inner sink belongs to the writing thread until close()")
        return shared.state.withLock { _ in shared.inner }
    }

    /// The capacity of the copies the scan's side and the queue hold: what the
    /// sink's data costs in memory, against the bytes the queue counts.
    var heldCapacity: Int {
        func capacity(_ operations: [Operation]) -> Int {
            operations.reduce(0) { sum, operation in
                guard case .write(let chunk) = operation else { return sum }
                return sum + chunk.capacity
            }
        }
        let queued = shared.state.withLock { queue in capacity(queue.waiting) + queue.spare.reduce(0) { $0 + $1.capacity } }
        return queued + capacity(batch) + spare.reduce(0) { $0 + $1.capacity }
    }

    public mutating func makeDirectory(_ path: EntryPath) throws(SystemError) { try add(.makeDirectory(path), bytes: 0) }

    public mutating func beginFile(_ path: EntryPath, size: Int64?) throws(SystemError) { try add(.beginFile(path, size), bytes: 0) }

    /// Copies `chunk`: the scan reuses its buffer as soon as this returns.
    public mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError) {
        var copy: [UInt8]
        if let last = spare.last, chunk.count * 2 >= last.capacity {
            copy = spare.removeLast()
            copy.removeAll(keepingCapacity: true)
            copy.append(contentsOf: chunk)
        } else {
            copy = [UInt8](chunk)
        }
        try add(.write(copy), bytes: chunk.count)
    }

    public mutating func endFile() throws(SystemError) { try add(.endFile, bytes: 0) }

    /// Hands over what is gathered and waits until the thread has performed it,
    /// or stopped at a failure, and has closed the inner sink.
    public mutating func close() {
        guard !closed else { return }
        closed = true
        _ = try? handOver()
        shared.state.withLock { $0.finishing = true }
        shared.state.withLock(when: { $0.finished }) { _ in }
    }

    private mutating func add(_ operation: Operation, bytes: Int) throws(SystemError) {
        precondition(!closed, "an operation after close()")
        batch.append(operation)
        batchBytes += bytes
        if batch.count >= Self.batchOperations || batchBytes >= Self.batchBytes { try handOver() }
    }

    /// Queues the gathered operations, waiting while the queue is full; throws
    /// the thread's failure instead, once there is one.
    private mutating func handOver() throws(SystemError) {
        guard !batch.isEmpty else { return }
        let operations = batch, bytes = batchBytes
        batch.removeAll(keepingCapacity: true)
        batchBytes = 0
        var returned: [[UInt8]] = []
        let failure: SystemError? = shared.state.withLock(when: { queue in
            // An empty queue takes any batch, so one larger than the bound cannot wait forever.
            queue.failure != nil || (queue.bytes == 0 && queue.waiting.isEmpty)
                || (queue.bytes + bytes <= Self.maxQueuedBytes && queue.waiting.count + operations.count <= Self.maxQueuedOperations)
        }) { queue in
            if let failure = queue.failure { return failure }
            queue.waiting.append(contentsOf: operations)
            queue.bytes += bytes
            swap(&returned, &queue.spare)
            return nil
        }
        spare.append(contentsOf: returned.prefix(Self.spareBuffers - spare.count))
        if let failure { throw failure }
    }

    enum Operation {
        case makeDirectory(EntryPath)
        case beginFile(EntryPath, Int64?)
        case write([UInt8])
        case endFile
    }

    struct Queue {
        var waiting: [Operation] = []
        /// Data bytes queued, or taken by the thread and not yet written.
        var bytes = 0
        /// Copies written, on their way back to the scan.
        var spare: [[UInt8]] = []
        var failure: SystemError?
        /// The scan has handed over its last operation.
        var finishing = false
        /// The thread is done, and the inner sink closed.
        var finished = false
    }

    /// What the scan's side and the writing thread share. `inner` is used by the
    /// thread alone until it sets `finished`, then by the caller alone; the
    /// lock's hand-over orders the two, which is why the type may be `@unchecked Sendable`.
    final class Shared: @unchecked Sendable {
        let state = WaitableState(Queue())
        var inner: Inner

        init(_ inner: Inner) { self.inner = inner }

        /// The writing thread: performs the queued operations in order until the
        /// scan is finished or one fails, then closes the inner sink.
        func run() {
            while true {
                var taken: [Operation] = []
                let last = state.withLock(when: { !$0.waiting.isEmpty || $0.finishing }) { queue in
                    swap(&taken, &queue.waiting)
                    return queue.finishing && taken.isEmpty
                }
                if last { break }
                var failure: SystemError?
                for operation in taken {
                    do throws(SystemError) {
                        try perform(operation)
                    } catch {
                        failure = error
                        break
                    }
                }
                // What follows a failure is dropped unperformed: its bytes leave the queue too.
                var bytes = 0
                var written: [[UInt8]] = []
                for case .write(let chunk) in taken {
                    bytes += chunk.count
                    if written.count < PipelinedSink.spareBuffers, chunk.capacity <= PipelinedSink.spareCapacity { written.append(chunk) }
                }
                // The copies go back referenced only by the queue, so that the scan
                // refills them in place rather than copying them first.
                taken = []
                state.withLock { queue in
                    queue.bytes -= bytes
                    queue.failure = failure
                    queue.spare.append(contentsOf: written.prefix(PipelinedSink.spareBuffers - queue.spare.count))
                    written.removeAll()
                }
                if failure != nil { break }
            }
            inner.close()
            state.withLock { $0.finished = true }
        }

        private func perform(_ operation: Operation) throws(SystemError) {
            switch operation {
            case .makeDirectory(let path): try inner.makeDirectory(path)
            case .beginFile(let path, let size): try inner.beginFile(path, size: size)
            case .write(let bytes):
                try bytes.withUnsafeBytes { chunk in Result { () throws(SystemError) in try inner.write(chunk) } }.get()
            case .endFile: try inner.endFile()
            }
        }
    }
}
