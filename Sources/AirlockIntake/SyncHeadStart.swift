import AirlockConfiguration
import AirlockPolicy
import AirlockSystem
import Dispatch
import Synchronization

/// syncfs calls started on another thread while a large drop is still being
/// decoded and hashed, so that by the time the commit's own syncfs runs most of
/// the drop's pages are on disk and that call waits only for the rest.
///
/// They follow the child's `WritingNotice`s, one call for each `minimumBytes` it
/// says it wrote, so the disk writes while the child decodes rather than in a
/// burst after it: on journaled ext4, a 90 MiB tar.zst whose calls waited for
/// each closed and hashed 18 MiB file left about a file's worth for after the
/// child's exit (the commit's syncfs then took 8 to 136 ms in four traced runs;
/// with the notices, 2 and 3 ms in two).
///
/// A head start and nothing more. Each call covers what was written before it
/// began and reports nothing; durability is the commit's syncfs, which runs
/// after every write the entry needs (modes, manifest) and whose failure stops
/// the commit. Requests made while a call runs are served by one more call
/// after it, so there is never more than one running and one waiting.
final class SyncHeadStart: Sendable {
    /// Written data worth a call of its own: a second syncfs per drop would cost
    /// a flood of small drops more than it saves.
    static let minimumBytes: Int64 = 8 << 20
    /// Files worth a call of their own, whatever their size: on a journaled
    /// filesystem the commit's syncfs of many small files is mostly their inodes
    /// and blocks being allocated and logged, about as long as the supervisor's
    /// walk of staging that comes before it, and can overlap that walk. Drops of
    /// a few files (a flood of small ZIPs) stay at one syncfs each.
    static let minimumFiles: Int64 = 256

    private struct State {
        var waiting = false
        var closed = false
        /// Bytes written since the last call was requested.
        var unsynced: Int64 = 0
        /// Bytes the child has said it wrote, in all.
        var announced: Int64 = 0
        /// Calls made so far.
        var calls = 0
    }

    private let directory: FileDescriptor
    /// The most the child's notices are believed for: what the policy lets a drop write.
    private let limit: Int64
    private let queue = DispatchQueue(label: "airlock.sync-head-start")
    private let state = Mutex(State())

    /// For the filesystem holding `directory`, which must stay open until
    /// `close()` returns; notices are believed for at most `limit` bytes in all.
    init(_ directory: FileDescriptor, limit: Int64) {
        self.directory = directory
        self.limit = limit
    }

    /// For a drop's staging when the configuration commits with one syncfs.
    static func forStaging(_ staging: FileDescriptor, _ configuration: Configuration, policy: Policy) -> SyncHeadStart? {
        configuration.sync == .syncfs ? SyncHeadStart(staging, limit: policy.maxTotalBytes) : nil
    }

    /// The child says it wrote `bytes` more (a `WritingNotice`); asks for a call
    /// once `minimumBytes` have gathered. A child claiming more than `limit` in
    /// all gets no call for the excess, so a lying child cannot keep the disk
    /// syncing for longer than an honest one writing all it may.
    func written(_ bytes: Int64) {
        let due = state.withLock { state -> Bool in
            let believed = max(0, min(bytes, limit - state.announced))
            state.announced += believed
            state.unsynced += believed
            return state.unsynced >= Self.minimumBytes
        }
        if due { request() }
    }

    /// The decoder has exited: one more call, if anything worth one was
    /// written. Returns whether it asked for one: then every page the drop
    /// wrote is being written back on this object's thread already.
    @discardableResult
    func decoderExited(wroteAtLeast bytes: Int64, files: Int64) -> Bool {
        guard bytes >= Self.minimumBytes || files >= Self.minimumFiles else { return false }
        request()
        return true
    }

    private func request() {
        let start = state.withLock { state -> Bool in
            guard !state.closed, !state.waiting else { return false }
            state.waiting = true
            state.unsynced = 0
            return true
        }
        guard start else { return }
        queue.async { [self] in
            state.withLock { state in
                state.waiting = false
                state.calls += 1
            }
            try? directory.syncFilesystem()
        }
    }

    /// How many calls were made; final once `close()` has returned.
    var calls: Int { state.withLock { $0.calls } }

    /// Waits for the calls requested so far (for tests).
    func waitUntilIdle() {
        queue.sync {}
    }

    /// Waits for the calls requested so far; none is started after.
    func close() {
        state.withLock { $0.closed = true }
        queue.sync {}
    }
}
