import AirlockConfiguration
import AirlockEvents
import AirlockPolicy
import AirlockSystem
import Foundation
import Synchronization

/// `state/instances/NAME.json`: what an instance of a fleet last said of itself,
/// and the generation that fences it. Replaced atomically (a rename), only by a
/// process holding `NAME.lock`: the instance at its start, or one taking it over.
public struct InstanceRecord: Sendable, Equatable {
    public var instance: String
    public var generation: UInt64 = 0
    public var pid: Int?
    public var host: String?
    public var startedAt: String?
    public var commitMode: String?
    /// `running` while the instance works, `stopped` after a clean stop,
    /// `taken-over` once another instance adopted its work.
    public var state = "running"
    public var takenOverBy: String?
    public var takenOverAt: String?

    public init(instance: String) {
        self.instance = instance
    }

    var text: String {
        var json = JSONObjectWriter()
        json.add("instance", instance)
        json.add("generation", Int64(generation))
        if let pid { json.add("pid", Int64(pid)) }
        if let host { json.add("host", host) }
        if let startedAt { json.add("started_at", startedAt) }
        if let commitMode { json.add("commit_mode", commitMode) }
        json.add("state", state)
        if let takenOverBy { json.add("taken_over_by", takenOverBy) }
        if let takenOverAt { json.add("taken_over_at", takenOverAt) }
        return json.text + "\n"
    }

    /// The record in `bytes`; nil when it does not read (a field that does not is left out).
    static func read(_ bytes: [UInt8], instance: String) -> InstanceRecord? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else { return nil }
        var record = InstanceRecord(instance: instance)
        guard let generation = (object["generation"] as? NSNumber)?.uint64Value else { return nil }
        record.generation = generation
        record.pid = (object["pid"] as? NSNumber)?.intValue
        record.host = object["host"] as? String
        record.startedAt = object["started_at"] as? String
        record.commitMode = object["commit_mode"] as? String
        record.state = object["state"] as? String ?? "running"
        record.takenOverBy = object["taken_over_by"] as? String
        record.takenOverAt = object["taken_over_at"] as? String
        return record
    }
}

/// The instances' directory, `state/instances/`: one lock and one record per instance.
public struct InstanceDirectory: Sendable {
    static let name: [UInt8] = Array("instances".utf8)
    /// `state/instances/`, open while any copy of this value lives.
    package var directory: FileDescriptor { owner.descriptor }
    private let owner: SharedDescriptor

    static func lockName(_ instance: String) -> [UInt8] { Array("\(instance).lock".utf8) }
    static func recordName(_ instance: String) -> [UInt8] { Array("\(instance).json".utf8) }

    /// Opens `state/instances/`, making it (0700) when `create` is set; nil when it is
    /// missing (a root no fleet ran on).
    static func open(_ state: FileDescriptor, create: Bool) throws(SystemError) -> InstanceDirectory? {
        if create {
            do {
                try state.makeDirectory(name, mode: 0o700)
            } catch where error.errno == .exists {
            }
        }
        do {
            return InstanceDirectory(owner: SharedDescriptor(OwnedDescriptor(try state.openDirectory(name))))
        } catch where error.errno == .noEntry && !create {
            return nil
        }
    }

    /// Every instance that has a lock file, by name.
    package func names() throws(SystemError) -> [String] {
        try directory.entryNames().compactMap { entry -> String? in
            let text = String(decoding: entry, as: UTF8.self)
            guard text.hasSuffix(".lock") else { return nil }
            let name = String(text.dropLast(5))
            return ClusterSettings.problem(with: name) == nil ? name : nil
        }.sorted()
    }

    /// The instance's record; nil when there is none or it does not read.
    package func record(_ instance: String) -> InstanceRecord? {
        guard let bytes = try? directory.open(InstanceDirectory.recordName(instance), [.readOnly, .noFollow])
            .closeAfter({ (fd) throws(SystemError) in try fd.readAll(limit: 8192) }) else { return nil }
        return InstanceRecord.read(bytes, instance: instance)
    }

    /// Replaces the instance's record; the caller holds its lock.
    package func write(_ record: InstanceRecord) throws(SystemError) {
        try directory.replaceAtomically(InstanceDirectory.recordName(record.instance), with: Array(record.text.utf8),
                                        temporary: Array("\(record.instance).json.tmp".utf8), .init(mode: 0o600))
    }

    /// Opens (creating) the instance's lock file.
    package func openLock(_ instance: String) throws(SystemError) -> FileDescriptor {
        try directory.open(InstanceDirectory.lockName(instance), [.readWrite, .create, .noFollow], mode: 0o600)
    }

    /// Whether some process holds the instance's lock now.
    func isHeld(_ instance: String) -> Bool {
        guard let opened = try? directory.open(InstanceDirectory.lockName(instance), [.readOnly, .noFollow]) else { return false }
        let owned = OwnedDescriptor(opened)
        guard let free = try? owned.descriptor.tryLockShared() else { return false }
        if free { owned.descriptor.unlock() }
        return !free
    }
}

/// One instance of a fleet, alive: it holds `state/instances/NAME.lock` for its
/// lifetime (its run lock), a shared lock on `state/airlock.pid` (so a single
/// daemon, which takes that one exclusive, never runs beside a fleet), and the
/// generation it started with. Another instance that gets the lock after this
/// one died adopts its work and bumps the generation; a frozen instance that wakes
/// after that finds its generation changed (`check()`) and commits nothing.
public final class InstanceLock: Sendable {
    public let name: String
    public let generation: UInt64
    package let instances: InstanceDirectory
    private let lock: FileDescriptor?
    private let fleetGuard: FileDescriptor
    /// Set once this instance found itself taken over; it stays set.
    private let fencedDetail = Mutex<String?>(nil)

    private init(name: String, generation: UInt64, instances: InstanceDirectory, lock: FileDescriptor?, fleetGuard: FileDescriptor) {
        self.name = name
        self.generation = generation
        self.instances = instances
        self.lock = lock
        self.fleetGuard = fleetGuard
    }

    /// By hand, in this order: the instance's lock, then the shared lock on the
    /// run lock (a single daemon may start only once no instance is left), and
    /// `state/instances/` last, when `instances` goes after this body (unless a
    /// take-over still holds a copy). Swift does not say in which order a class's
    /// stored owners are released, nor lets a deinit consume them one by one.
    deinit {
        lock?.close()
        fleetGuard.close()
    }

    /// Why an instance could not start.
    public enum Refusal: Error, CustomStringConvertible {
        /// Another process runs as this instance (its pid, if the record names one).
        case instanceRunning(pid: Int?)
        /// A single airlock (no fleet) runs on the root.
        case singleDaemonRunning

        public var description: String {
            switch self {
            case .instanceRunning(let pid): "another process (pid \(pid.map(String.init) ?? "unknown")) runs as this instance"
            case .singleDaemonRunning: "a single airlock (without --instance or cluster settings) runs on this root"
            }
        }
    }

    /// Takes the instance's locks and starts its next generation.
    ///
    /// Under `AIRLOCK_TEST_INSTANCE_LOCK_HELD=1` the instance lock is held by the
    /// process that started this one (it must be held by someone: checked), so a
    /// test can free it while this process is stopped, as a shared filesystem's
    /// server frees a frozen client's locks when it evicts it.
    public static func acquire(_ layout: RootLayout, name: String, commitMode: CommitMode) throws -> InstanceLock {
        guard let instances = try InstanceDirectory.open(layout.state, create: true) else { preconditionFailure("made above") }
        let fleetGuard = OwnedDescriptor(try layout.state.open(RunLock.name, [.readWrite, .create, .noFollow], mode: 0o600))
        // The instance's lock is owned by the call below until it succeeds: on a
        // failure it goes there, before the shared lock held here.
        let (generation, lock) = try startGeneration(instances, name: name, commitMode: commitMode, fleetGuard: fleetGuard.descriptor)
        return InstanceLock(name: name, generation: generation, instances: instances, lock: lock, fleetGuard: fleetGuard.take())
    }

    /// Takes the locks (`takeLocks`) and records the instance's next generation;
    /// the instance's lock is handed on only once the record is written.
    private static func startGeneration(_ instances: InstanceDirectory, name: String, commitMode: CommitMode,
                                        fleetGuard: FileDescriptor) throws -> (generation: UInt64, lock: FileDescriptor?) {
        let lock = try takeLocks(instances, name: name, fleetGuard: fleetGuard)
        var record = instances.record(name) ?? InstanceRecord(instance: name)
        record.generation += 1
        record.pid = Int(ProcessInfo.processInfo.processIdentifier)
        record.host = CurrentProcess.hostName()
        record.startedAt = timestamp()
        record.commitMode = commitMode.rawValue
        record.state = "running"
        record.takenOverBy = nil
        record.takenOverAt = nil
        try instances.write(record)
        return (record.generation, lock.take().first)
    }

    /// The shared lock on the root's run lock, then the instance's own (the one
    /// descriptor returned holds it; none under AIRLOCK_TEST_INSTANCE_LOCK_HELD).
    private static func takeLocks(_ instances: InstanceDirectory, name: String, fleetGuard: FileDescriptor) throws -> OwnedDescriptors {
        guard try fleetGuard.tryLockShared() else { throw Refusal.singleDaemonRunning }
        let file = OwnedDescriptor(try instances.openLock(name))
        let heldForUs = ProcessInfo.processInfo.environment["AIRLOCK_TEST_INSTANCE_LOCK_HELD"] == "1"
        // Another instance holds this lock for a moment at each of its polls, when
        // it looks whether this one left work to take over: tried for a second.
        let taken = try file.descriptor.lockExclusive(within: heldForUs ? 0 : 1, every: 50)
        var held = OwnedDescriptors()
        if heldForUs {
            // Ours is closed as this returns: the lock stays with whoever holds it for us.
            guard !taken else {
                throw SystemError("AIRLOCK_TEST_INSTANCE_LOCK_HELD: nobody holds", InstanceDirectory.lockName(name), .invalidArgument)
            }
            return held
        }
        guard taken else { throw Refusal.instanceRunning(pid: instances.record(name)?.pid) }
        held.append(file)
        return held
    }

    /// Why this instance may no longer commit, or nil: its record no longer holds
    /// its generation (another instance took it over). Once found, it stays.
    public func fenced() -> String? {
        if let detail = fencedDetail.withLock({ $0 }) { return detail }
        return fenced(seeing: instances.record(name))
    }

    /// `fenced()` on a record already read (nil: it could not be read).
    public func fenced(seeing record: InstanceRecord?) -> String? {
        if let detail = fencedDetail.withLock({ $0 }) { return detail }
        guard let record else {
            // A record that cannot be read now (being replaced, a network hiccup)
            // is not proof of a take-over; the next look decides.
            return nil
        }
        guard record.generation != generation else { return nil }
        let detail = "instance \(name) was taken over (generation \(generation) is now \(record.generation)"
            + (record.takenOverBy.map { ", by \($0)" } ?? "") + "): stopping"
        fencedDetail.withLock { $0 = $0 ?? detail }
        return detail
    }

    /// Throws ESTALE when this instance is fenced, or when the claim `id`, open as
    /// `directory`, is no longer where this instance put it (`claimed/NAME/ID`, the
    /// same directory): called just before each step that commits a decision.
    public func check(_ id: [UInt8], directory: FileDescriptor, in claimed: FileDescriptor) throws(SystemError) {
        if let detail = fenced() { throw SystemError(detail, id, .stale) }
        let here = try? claimed.status(of: id)
        let held = try? directory.status()
        guard let here, let held, here.inode == held.inode, here.device == held.device else {
            throw SystemError("claim taken by another instance", id, .stale)
        }
    }

    /// Marks the record `stopped` after a clean stop (its claims wait for its next
    /// start, or for another instance to adopt them).
    public func recordStop() {
        guard fenced() == nil, var record = instances.record(name), record.generation == generation else { return }
        record.state = "stopped"
        try? instances.write(record)
    }
}
