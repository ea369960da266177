import AirlockSystem
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What this machine and this process offer tests that need more than the build:
/// each a condition for `.enabled(if:_:)`, so that a test that cannot run here is
/// skipped with its reason rather than failing (CI runs as root, with everything).
enum Requirement {
    static let root = getuid() == 0

    /// Whether `capability` (its number, linux/capability.h) is in this process's
    /// effective set, which the programs it starts inherit when it is root.
    static func holds(_ capability: Int) -> Bool {
        (try? Capabilities.current())?.holds(capability) ?? false
    }

    /// CAP_LEASE (28): `airlock run` takes a read lease on each drop before it
    /// claims it, and refuses to start without one (watch.completion "lease").
    static let leases = holds(Capabilities.lease)

    /// CAP_SYS_ADMIN (21): mounting a filesystem.
    static let mounts = holds(21) && FileManager.default.isExecutableFile(atPath: "/bin/mount")

    /// CAP_LINUX_IMMUTABLE (9), chattr, and a filesystem for temporary
    /// directories that keeps the immutable attribute (ext4 does; not every one does).
    static let immutable: Bool = {
        guard holds(9), FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr"),
              let probe = try? Sandbox() else { return false }
        let set = (try? runTool("/usr/bin/chattr", ["+i", probe.logs.path]))?.status == 0
        _ = try? runTool("/usr/bin/chattr", ["-i", probe.logs.path])
        return set
    }()

    /// Whether the repository can be written (`make install` builds its man pages into .build/).
    static let writableRepository = access(Binary.repository.path, W_OK) == 0
}

extension Trait where Self == ConditionTrait {
    /// For tests that start `airlock run` with its default completion rule.
    static var needsLeases: Self {
        .enabled(if: Requirement.leases, "needs CAP_LEASE (root, or the capability) for airlock run to take read leases on drops")
    }
}
