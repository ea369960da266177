import AirlockSystem
import Dispatch
import Synchronization

/// SHA-256 of a drop on a thread of its own; `done` runs there with the result.
///
/// The hash is handed over before `done` runs, so a worker that needs only the
/// hash (for the manifest) does not also wait for `done`'s journal append, which
/// may queue behind another worker's journal fsync.
final class HashJob: Sendable {
    private let hashed = DispatchGroup()
    private let finished = DispatchGroup()
    private let result = Mutex<String?>(nil)

    init(drop: FileDescriptor, limit: Int64, done: @escaping @Sendable (String?) -> Void) {
        hashed.enter()
        finished.enter()
        let job: @Sendable () -> Void = { [self] in
            // pread only: the decoder child shares this descriptor's file offset.
            let sha256 = (try? Digest.sha256(of: drop, limit: limit)) ?? nil
            result.withLock { $0 = sha256 }
            hashed.leave()
            done(sha256)
            finished.leave()
        }
        // A thread of its own rather than dispatch's: where the host refuses threads
        // (out of tasks), dispatch queues the work for a thread it keeps failing to
        // start, and the drop's worker would wait for the hash forever. Refused, the
        // hash is computed here, before the decoder starts.
        do {
            try SystemThread.start(stackSize: 256 << 10, job)
        } catch {
            job()
        }
    }

    /// Waits for the hash; nil when the drop could not be read.
    func wait() -> String? {
        hashed.wait()
        return result.withLock { $0 }
    }

    /// Waits for the hash and for `done` to return.
    func waitUntilDone() -> String? {
        finished.wait()
        return wait()
    }
}
