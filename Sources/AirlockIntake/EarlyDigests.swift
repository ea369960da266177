import AirlockPolicy
import AirlockSystem
import Dispatch
import Synchronization

/// SHA-256 of the decoder's large files while it is still decoding, on another
/// core, so the manifest need not hash them after it exits.
///
/// The decoder child announces each large file it has closed
/// (`WrittenFileNotice`). The child has parsed hostile bytes and may be
/// anyone's by then, so the notice is only a hint, and a hash taken early is
/// used only when it is provably the hash of what the outbox will hold:
/// - the file is opened beneath staging one component at a time without
///   following links, and must be a regular file;
/// - before a byte is read, this process takes a read lease on it. The kernel
///   grants one only while nobody has the file open for writing (a writable
///   mapping counts), and breaks it the moment anyone opens it for writing or
///   truncates it;
/// - the manifest uses the hash only for the same inode (this descriptor keeps
///   it from being freed and its number reused) and only while the lease still
///   stands, checked after the child has exited.
///
/// So an unbroken lease means the file's bytes have not changed since before
/// they were hashed. Anything else (no lease granted, a lease broken, a file
/// renamed or replaced, a filesystem without leases) leaves the file to be
/// hashed after the child exits, as every file was before.
///
/// A lease break is announced with SIGIO, which the intake ignores: a child
/// that reopens a leased file for writing waits out the kernel's lease-break
/// time (or its own wall-clock limit), and its file is hashed again.
final class EarlyDigests: Sendable {
    private struct FileKey: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private struct Hashed {
        /// Held open, its lease with it, until `close()`.
        let file: SharedDescriptor
        let sha256: String
    }

    private struct State {
        var ended = false
        var announced = 0
        var bytes: Int64 = 0
        var files: [FileKey: Hashed] = [:]
        /// The file being hashed now, once opened: the audit waits for it rather
        /// than hashing it a second time.
        var hashing: FileKey?
    }

    /// At most this many of a drop's notices are taken.
    static let maximumFiles = 64
    /// At most this many files are held open (each with its lease) by the whole
    /// process, whatever the number of workers: descriptors are for the rest of it.
    static let maximumHeld = 256
    private static let held = Atomic<Int>(0)

    private let staging: FileDescriptor
    private let policy: Policy
    private let queue = DispatchQueue(label: "airlock.early-digests")
    private let state = WaitableState(State())

    /// - Parameter staging: the drop's staging directory, open until `close()` returns.
    init(staging: FileDescriptor, policy: Policy) {
        self.staging = staging
        self.policy = policy
    }

    /// Takes a child's notice that it closed the file at `path` beneath staging.
    func written(_ path: [UInt8]) {
        let accepted = state.withLock { state -> Bool in
            guard !state.ended, state.announced < Self.maximumFiles else { return false }
            state.announced += 1
            return true
        }
        if accepted { queue.async { [self] in hash(path) } }
    }

    /// Whether a file is being hashed at this moment (for tests).
    var isHashing: Bool { state.withLock { $0.hashing != nil } }

    /// Waits until every notice taken so far has been handled.
    func waitUntilIdle() {
        queue.sync {}
    }

    /// Once the child has exited: the files not started are skipped, which the
    /// manifest hashes on every core instead. The one being hashed goes on, and
    /// only its own lookup (`sha256(for:)`) waits for it, so the audit hashes the
    /// last files on the other cores meanwhile.
    func finish() {
        state.withLock { $0.ended = true }
    }

    /// The hash taken early of the staging file whose status (of the descriptor
    /// the manifest has open) is `status`, when it is of the same inode and its
    /// lease still stands; nil otherwise. Waits while that file is being hashed.
    func sha256(for status: FileStatus) -> String? {
        let key = FileKey(device: status.device, inode: status.inode)
        guard let hashed = state.withLock(when: { $0.hashing != key }, { $0.files[key] }) else { return nil }
        guard (try? hashed.file.descriptor.holdsReadLease()) == true else { return nil }
        return hashed.sha256
    }

    /// Ends the work, waits for the file being hashed, and closes every file
    /// held, letting their leases go.
    func close() {
        finish()
        queue.sync {}
        let files = state.withLock { state -> [Hashed] in
            defer { state.files.removeAll() }
            return Array(state.files.values)
        }
        for hashed in files { hashed.file.close() }
        Self.held.subtract(files.count, ordering: .relaxed)
    }

    private func hash(_ path: [UInt8]) {
        guard !state.withLock({ $0.ended }) else { return }
        guard Self.held.add(1, ordering: .relaxed).newValue <= Self.maximumHeld else {
            Self.held.subtract(1, ordering: .relaxed)
            return
        }
        var kept = false
        defer { if !kept { Self.held.subtract(1, ordering: .relaxed) } }
        // Closed when this returns unless kept in `state.files`; held to the end
        // of this scope, since a reference may otherwise go at its last use.
        guard let owned = open(path) else { return }
        let shared = SharedDescriptor(owned)
        defer { withExtendedLifetime(shared) {} }
        do {
            // Before the status and before any byte is read: from here on, a writer
            // would have to break the lease.
            try shared.descriptor.takeReadLease()
            let status = try shared.descriptor.status()
            guard status.kind == .regular, status.size <= policy.maxFileBytes else { return }
            let key = FileKey(device: status.device, inode: status.inode)
            // Not started once the child has exited: the audit may be hashing it already.
            let room = state.withLock { state -> Bool in
                guard !state.ended, state.files[key] == nil, state.bytes + status.size <= policy.maxTotalBytes else { return false }
                state.bytes += status.size
                state.hashing = key
                return true
            }
            guard room else { return }
            let sha256 = Result { () throws(SystemError) in
                try Digest.sha256(of: shared.descriptor, limit: policy.maxFileBytes, size: status.size)
            }
            kept = state.withLock { state -> Bool in
                state.hashing = nil
                guard case .success(let digest?) = sha256, state.files[key] == nil else { return false }
                state.files[key] = Hashed(file: shared, sha256: digest)
                return true
            }
            // The commit's syncfs waits for these pages: a head start only, begun
            // once the hash is out, so that a lookup waiting for it (the last file,
            // after the decoder's exit) does not also wait for sync_file_range to
            // queue the file's pages (3 ms for 18 MiB).
            if kept { try? shared.descriptor.startWriteback() }
        } catch {
            // No lease here (a writer still holds the file, or this filesystem
            // grants none), or it could not be read: hashed later with the rest.
        }
    }

    /// The file at `path` beneath staging, each directory opened without following
    /// a link; nil for a path that could lead anywhere else or does not open.
    private func open(_ path: [UInt8]) -> OwnedDescriptor? {
        let components = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        guard !components.isEmpty, components.count <= policy.maxDepth,
              components.allSatisfy({ !$0.isEmpty && $0 != [0x2E] && $0 != [0x2E, 0x2E] && !$0.contains(0) }) else { return nil }
        let name = components[components.count - 1]
        // Non-blocking: a FIFO put in the file's place must not hold this thread.
        let flags: OpenOptions = [.readOnly, .noFollow, .nonBlocking, .noControllingTerminal]
        guard components.count > 1 else { return try? OwnedDescriptor(staging.open(forReading: name, flags)) }
        guard let directory = try? Root(staging).openDirectory(Array(components.dropLast())) else { return nil }
        return try? OwnedDescriptor(directory.descriptor.open(forReading: name, flags))
    }
}
