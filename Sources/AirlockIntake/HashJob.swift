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
/// few microseconds) and `done` goes to `AfterHashLane`'s one long-lived thread:
/// a thread started and ended for each small drop cost the supervisor more
/// than its hash (clone3, the exit's stack release and two wake-ups). A larger
/// drop is hashed on a thread of its own, beside the decoder.
final class HashJob: Sendable {
    /// The largest drop hashed on the worker's own thread.
    static let inlineBytes: Int64 = 64 << 10

    private let hashed = DispatchGroup()
    private let finished = DispatchGroup()
    private let result = Mutex<String?>(nil)

    /// - Parameter size: the drop's size as just read by fstat; the hash stops at `limit` either way.
    init(drop: FileDescriptor, size: Int64, limit: Int64, done: @escaping @Sendable (String?) -> Void) {
        hashed.enter()
        finished.enter()
        if size <= HashJob.inlineBytes {
            // pread only: the decoder child shares this descriptor's file offset.
            let sha256 = (try? Digest.sha256(of: drop, limit: limit)) ?? nil
            result.withLock { $0 = sha256 }
            hashed.leave()
            AfterHashLane.shared.run { [self] in
                done(sha256)
                finished.leave()
            }
            return
        }
        let job: @Sendable () -> Void = { [self] in
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

/// One thread, started on first use and kept for the process's life, that runs
/// the work handed to it in order. Where no thread can be started (a host out
/// of tasks) the work runs on the caller's thread instead, so nothing waits for
/// a thread that never comes.
final class AfterHashLane: Sendable {
    static let shared = AfterHashLane()

    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var next = 0
        var started = false
        var refused = false
    }

    private let state = Mutex(State())
    private let pending = DispatchSemaphore(value: 0)

    /// Runs `job` on the lane's thread, after the jobs handed over before it.
    func run(_ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { state -> Bool? in
            if state.refused { return nil }
            state.jobs.append(job)
            defer { state.started = true }
            return !state.started
        }
        guard let start else {
            job()
            return
        }
        if start {
            do {
                try SystemThread.start(stackSize: 256 << 10) { [self] in serve() }
            } catch {
                // Whatever was queued so far (this job at least) runs here; later jobs run on their callers.
                let queued = state.withLock { state -> [@Sendable () -> Void] in
                    state.refused = true
                    defer { state.jobs = []; state.next = 0 }
                    return Array(state.jobs[state.next...])
                }
                queued.forEach { $0() }
                return
            }
        }
        pending.signal()
    }

    private func serve() -> Never {
        while true {
            pending.wait()
            let job = state.withLock { state -> @Sendable () -> Void in
                let job = state.jobs[state.next]
                state.next += 1
                if state.next == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.next = 0
                }
                return job
            }
            job()
        }
    }
}
