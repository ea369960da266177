import AirlockSystem

/// libmagic on threads of their own, one detector each, while the decoder goes
/// on extracting: on many small files type detection costs several times the
/// extraction, and one thread left the other cores idle.
///
/// The decoder hands over each file's first bytes (`headBytes` at most) as it
/// closes the file and takes the types back once the scan is over, by the
/// file's index in scan order, so the types, and every verdict the supervisor
/// draws from them, are what one thread would have found. The bytes waiting
/// are bounded (`maxQueuedBytes`, `maxQueuedFiles`): a decoder that extracts
/// faster than the threads type waits for them, and memory stays flat.
public final class TypingThreads: Sendable {
    static let maxQueuedBytes = 4 << 20
    static let maxQueuedFiles = 256
    /// Typing threads a decoder starts: one per processor, at most four.
    public static var wanted: Int { min(Processors.online, 4) }

    private struct State {
        var queue: [(index: Int, head: [UInt8])] = []
        var queueHead = 0
        var queuedBytes = 0
        var typing = 0
        var running = 0
        var closed = false
        var types: [Int: String] = [:]

        var queued: Int { queue.count - queueHead }
    }

    /// A detector handed to the one thread that uses it (a libmagic cookie is not
    /// shared between threads).
    private final class Owned: @unchecked Sendable {
        let detector: ContentTypeDetector
        init(_ detector: ContentTypeDetector) { self.detector = detector }
    }

    private let state = WaitableState(State())

    /// Starts a thread for each of `detectors`; nil when none could start (a host
    /// out of tasks), and the caller types on its own thread.
    public init?(_ detectors: [ContentTypeDetector]) {
        for detector in detectors {
            let owned = Owned(detector)
            state.withLock { $0.running += 1 }
            do {
                try SystemThread.start(stackSize: 512 << 10) { [self] in run(owned.detector) }
            } catch {
                state.withLock { $0.running -= 1 }
                break
            }
        }
        if state.withLock({ $0.running }) == 0 { return nil }
    }

    /// Queues file `index`'s first bytes, waiting while the queue is full.
    public func submit(_ index: Int, _ head: [UInt8]) {
        state.withLock(when: { $0.queued == 0 || ($0.queuedBytes + head.count <= Self.maxQueuedBytes && $0.queued < Self.maxQueuedFiles) }) {
            $0.queue.append((index, head))
            $0.queuedBytes += head.count
        }
    }

    /// Waits until every queued file is typed, ends the threads, and returns the
    /// types by index.
    public func finish() -> [Int: String] {
        state.withLock(when: { $0.queued == 0 && $0.typing == 0 }) { state in
            state.closed = true
            return state.types
        }
    }

    private func run(_ detector: ContentTypeDetector) {
        while let (index, head) = next() {
            let type = detector.type(of: head)
            state.withLock { state in
                state.types[index] = type
                state.typing -= 1
            }
        }
    }

    private func next() -> (Int, [UInt8])? {
        state.withLock(when: { $0.queued > 0 || $0.closed }) { state in
            guard state.queued > 0 else {
                state.running -= 1
                return nil
            }
            let job = state.queue[state.queueHead]
            state.queueHead += 1
            if state.queueHead == state.queue.count {
                state.queue.removeAll(keepingCapacity: true)
                state.queueHead = 0
            }
            state.queuedBytes -= job.head.count
            state.typing += 1
            return job
        }
    }
}
