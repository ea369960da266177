import AirlockEvents
import AirlockPolicy
import AirlockSystem
import Foundation

/// `state/airlock.pid`: held (flock) by whichever process is running the intake
/// on this root, a daemon or `run --once`, so two never recover or claim at once;
/// it names the holder's pid and start time for `status`. A pid file whose lock
/// nobody holds is stale, whatever it says.
public final class RunLock {
    static let name: [UInt8] = Array("airlock.pid".utf8)
    private let file: FileDescriptor

    private init(file: FileDescriptor) {
        self.file = file
    }

    deinit {
        file.close()
    }

    /// Takes the lock, or returns nil when another process holds it.
    public static func acquire(_ layout: RootLayout, mode: String) throws(SystemError) -> RunLock? {
        let file = try layout.state.open(name, [.readWrite, .create, .noFollow], mode: 0o600)
        do {
            guard try file.tryLockExclusive() else {
                file.close()
                return nil
            }
        } catch {
            file.close()
            throw SystemError("flock", name, error.errno)
        }
        // From here the lock's owner closes the descriptor (deinit), also on a throw.
        let lock = RunLock(file: file)
        try file.truncate(to: 0)
        let line = Holder(running: true, pid: Int(ProcessInfo.processInfo.processIdentifier), startedAt: timestamp(), mode: mode).line
        try file.write(Array((line + "\n").utf8), at: 0)
        return lock
    }

    /// Who took the lock last; the file holds all but `running`, which is whether the lock is held now.
    public struct Holder: Decodable {
        public var running: Bool
        public let pid: Int?
        public let startedAt: String?
        public let mode: String?

        enum Key: String, CodingKey {
            case pid, startedAt = "started_at", mode
        }

        init(running: Bool, pid: Int?, startedAt: String?, mode: String?) {
            self.running = running
            self.pid = pid
            self.startedAt = startedAt
            self.mode = mode
        }

        /// A field that does not read is left out rather than failing the rest.
        public init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Key.self)
            self.init(running: false, pid: try? fields.decodeIfPresent(Int.self, forKey: .pid),
                      startedAt: try? fields.decodeIfPresent(String.self, forKey: .startedAt),
                      mode: try? fields.decodeIfPresent(String.self, forKey: .mode))
        }

        /// The lock file's line.
        var line: String {
            var json = JSONObjectWriter()
            if let pid { json.add(Key.pid.rawValue, Int64(pid)) }
            if let startedAt { json.add(Key.startedAt.rawValue, startedAt) }
            if let mode { json.add(Key.mode.rawValue, mode) }
            return json.text
        }
    }

    /// Who holds the lock, if anyone.
    public static func holder(_ layout: RootLayout) -> Holder {
        guard let file = try? layout.state.open(name, [.readOnly, .noFollow]) else {
            return Holder(running: false, pid: nil, startedAt: nil, mode: nil)
        }
        defer { file.close() }
        let running = (try? !file.tryLockShared()) ?? false
        if !running { file.unlock() }
        let text = (try? file.readAll(limit: 4096)) ?? []
        var holder = (try? JSONDecoder().decode(Holder.self, from: Data(text))) ?? Holder(running: false, pid: nil, startedAt: nil, mode: nil)
        holder.running = running
        return holder
    }
}
