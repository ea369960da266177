import AirlockConfiguration
import AirlockIntake
import AirlockSystem
import AirlockText
import Synchronization

/// Temporary names in the inbox (`watch.ignore`, `watch.ignore_also`): uploads
/// in progress, or left behind by a client that died before its rename. Producers
/// cannot list the inbox, so nobody else sees them: they are counted, the oldest's
/// age is reported, and past `watch.abandoned_remove_seconds` they are removed.
public struct AbandonedUploads: Sendable, Equatable {
    public var count: Int64 = 0
    /// By modification time: the last write. 0 with none.
    public var oldestSeconds: Int64 = 0
    public var oldestName: String?

    public init() {}

    /// Regular files under temporary names removed since the process started.
    private static let removed = Atomic<Int64>(0)
    public static var removedTotal: Int64 { removed.load(ordering: .relaxed) }

    /// Counts the temporary names in `inbox` and finds the oldest.
    public static func survey(_ inbox: FileDescriptor, _ configuration: Configuration) throws(SystemError) -> AbandonedUploads {
        var found = AbandonedUploads()
        let now = WallClock.seconds()
        for name in try inbox.entryNames() where Intake.isTemporaryName(name, configuration) {
            guard let status = try? inbox.status(of: name) else { continue }
            found.count += 1
            let age = max(0, now - status.modifiedSeconds)
            if found.oldestName == nil || age > found.oldestSeconds {
                (found.oldestSeconds, found.oldestName) = (age, EscapedName(name).text)
            }
        }
        return found
    }

    /// Removes the regular files under temporary names not written for `seconds`
    /// (0: none) that no process holds open for writing: a read lease is taken
    /// first, and a name a writer holds is left. Returns what was removed, for the log.
    public static func removeStale(_ inbox: FileDescriptor, _ configuration: Configuration, olderThan seconds: Int64)
        -> [(name: String, bytes: Int64, age: Int64)] {
        guard seconds > 0, let names = try? inbox.entryNames() else { return [] }
        let now = WallClock.seconds()
        var gone: [(name: String, bytes: Int64, age: Int64)] = []
        for name in names where Intake.isTemporaryName(name, configuration) {
            guard let status = try? inbox.status(of: name), status.kind == .regular,
                  now - status.modifiedSeconds >= seconds, noWriter(name, in: inbox) else { continue }
            do {
                try inbox.unlink(name)
                removed.add(1, ordering: .relaxed)
                gone.append((EscapedName(name).text, status.size, now - status.modifiedSeconds))
            } catch {
                continue
            }
        }
        return gone
    }

    /// Whether a read lease can be taken on `name`: nobody has it open for writing.
    private static func noWriter(_ name: [UInt8], in inbox: FileDescriptor) -> Bool {
        guard let fd = try? inbox.open(name, [.readOnly, .noFollow, .nonBlocking]) else { return false }
        defer { fd.close() }
        guard (try? fd.takeReadLease()) != nil else { return false }
        fd.releaseLease()
        return true
    }
}
