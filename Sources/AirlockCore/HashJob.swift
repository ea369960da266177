import AirlockSystem
import Dispatch
import Synchronization

/// SHA-256 of a drop on a background thread; `done` runs there with the result.
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
        DispatchQueue.global().async { [self] in
            // pread only: the decoder child shares this descriptor's file offset.
            let sha256 = (try? Digest.sha256(of: drop, limit: limit)) ?? nil
            result.withLock { $0 = sha256 }
            hashed.leave()
            done(sha256)
            finished.leave()
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
