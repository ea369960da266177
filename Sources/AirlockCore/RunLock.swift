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
        var line = JSONObjectWriter()
        line.add("pid", Int64(ProcessInfo.processInfo.processIdentifier))
        line.add("started_at", timestamp())
        line.add("mode", mode)
        try file.write(Array((line.text + "\n").utf8), at: 0)
        return lock
    }

    public struct Holder {
        public let running: Bool
        public let pid: Int?
        public let startedAt: String?
        public let mode: String?
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
        let object = (try? JSONSerialization.jsonObject(with: Data(text))) as? [String: Any]
        return Holder(running: running, pid: (object?["pid"] as? NSNumber)?.intValue,
                      startedAt: object?["started_at"] as? String, mode: object?["mode"] as? String)
    }
}
