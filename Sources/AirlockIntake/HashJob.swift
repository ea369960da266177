import AirlockSystem
import Dispatch
import Synchronization

/// SHA-256 of a drop beside its decoder; `done` runs off the worker's thread
/// with the result.
///
/// The hash is handed over before `done` runs, so a worker that needs only the
/// hash (for the manifest) does not also wait for `done`'s journal append, which
/// may queue behind another worker's journal fsync.
///
/// A drop of at most `inlineBytes` is hashed on the worker's thread at once (a
/// few microseconds) and `done` goes to one long-lived thread (`afterHash`):
/// a thread started and ended for each small drop cost the supervisor more
/// than its hash (clone3, the exit's stack release and two wake-ups). A larger
/// drop is hashed on a thread of its own, beside the decoder.
final class HashJob: Sendable {
    /// The largest drop hashed on the worker's own thread.
    static let inlineBytes: Int64 = 64 << 10
    /// Where the small drops' `done` runs, one after another.
    private static let afterHash = SerialThread(stackSize: 256 << 10)

    private let hashed = DispatchGroup()
    private let finished = DispatchGroup()
    private let result = Mutex<String?>(nil)

    /// - Parameter size: the drop's size as just read by fstat; the hash stops at `limit` either way.
    init(drop: FileDescriptor, size: Int64, limit: Int64, done: @escaping @Sendable (String?) -> Void) {
        hashed.enter()
        finished.enter()
        let hash: @Sendable () -> String? = { [self] in
            // pread only: the decoder child shares this descriptor's file offset.
            let sha256 = (try? Digest.sha256(of: drop, limit: limit)) ?? nil
            result.withLock { $0 = sha256 }
            hashed.leave()
            return sha256
        }
        let finish: @Sendable (String?) -> Void = { [self] sha256 in
            done(sha256)
            finished.leave()
        }
        if size <= HashJob.inlineBytes {
            let sha256 = hash()
            // Refused a thread (a host out of tasks), `done` runs here.
            do { try HashJob.afterHash.run { finish(sha256) } } catch { finish(sha256) }
            return
        }
        let job: @Sendable () -> Void = { finish(hash()) }
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
