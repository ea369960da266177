import AirlockPolicy
import AirlockSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
        let file = try layout.state.open(name, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600)
        while flock(file.rawValue, LOCK_EX | LOCK_NB) != 0 {
            let error = Errno.current
            if error == .interrupted { continue }
            file.close()
            if error == .wouldBlock { return nil }
            throw SystemError("flock", name, error)
        }
        _ = try retrying("ftruncate") { ftruncate(file.rawValue, 0) }
        var line = JSONObjectWriter()
        line.add("pid", Int64(getpid()))
        line.add("started_at", timestamp())
        line.add("mode", mode)
        _ = try retrying("pwrite") {
            Array((line.text + "\n").utf8).withUnsafeBytes { pwrite(file.rawValue, $0.baseAddress, $0.count, 0) }
        }
        return RunLock(file: file)
    }

    public struct Holder {
        public let running: Bool
        public let pid: Int?
        public let startedAt: String?
        public let mode: String?
    }

    /// Who holds the lock, if anyone.
    public static func holder(_ layout: RootLayout) -> Holder {
        guard let file = try? layout.state.open(name, O_RDONLY | O_NOFOLLOW) else {
            return Holder(running: false, pid: nil, startedAt: nil, mode: nil)
        }
        defer { file.close() }
        let running = flock(file.rawValue, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
        if !running { flock(file.rawValue, LOCK_UN) }
        let text = (try? file.readAll(limit: 4096)) ?? []
        let object = (try? JSONSerialization.jsonObject(with: Data(text))) as? [String: Any]
        return Holder(running: running, pid: (object?["pid"] as? NSNumber)?.intValue,
                      startedAt: object?["started_at"] as? String, mode: object?["mode"] as? String)
    }
}
