import AirlockSystem
import Foundation

/// How a finished directory moves to its final name without replacing one that
/// is there: `renameat2(RENAME_NOREPLACE)` where the filesystem offers it;
/// otherwise (EINVAL on CephFS, GlusterFS, sshfs and other FUSE filesystems, and
/// from the Linux NFS client for any rename flag) a plain rename(2) of the
/// directory, which is never empty (staging holds the manifest, a claim its drop
/// and report): a non-empty directory renamed onto an existing non-empty one
/// fails with ENOTEMPTY or EEXIST (EPERM on some servers, ENOTDIR onto a file),
/// and nothing ever leaves an empty directory in the outbox or the quarantine for
/// it to replace. link(2) is not used as an exclusive create: it had two winners
/// in races on GlusterFS.
public enum CommitMode: String, Sendable {
    case noreplace
    case rename

    /// The mode the filesystem of `directory` allows, found by trying
    /// RENAME_NOREPLACE on two scratch directories made in it (then removed).
    /// `AIRLOCK_TEST_COMMIT_MODE=rename` forces the plain rename, so tests run
    /// it on a filesystem that has the flag.
    public static func probe(in directory: FileDescriptor) -> CommitMode {
        if ProcessInfo.processInfo.environment["AIRLOCK_TEST_COMMIT_MODE"] == "rename" { return .rename }
        let stem = ".commit-probe-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: .min ... .max))"
        let from = Array((stem + "-a").utf8), to = Array((stem + "-b").utf8)
        defer {
            try? directory.removeDirectory(from)
            try? directory.removeDirectory(to)
        }
        do {
            try directory.makeDirectory(from, mode: 0o700)
            try directory.renameNoReplace(from, to: directory, to)
            return .noreplace
        } catch where error.errno == .invalidArgument || error.errno == .notSupported {
            return .rename
        } catch {
            // Cannot tell (the directory is not writable): the flag is tried at each
            // commit and refused there loudly rather than guessed at here.
            return .noreplace
        }
    }

    /// Whether `error`, from a move onto `name`, means the name is taken.
    public func isTaken(_ error: SystemError) -> Bool {
        switch self {
        case .noreplace: error.errno == .exists
        case .rename: [.notEmpty, .exists, .notPermitted, .notDirectory, .isDirectory].contains(error.errno)
        }
    }

    /// Moves the never-empty directory `name` of `from` to `newName` in `to`;
    /// throws EEXIST (whatever the filesystem said) when `newName` is taken.
    public func move(_ name: [UInt8], in from: FileDescriptor, to: FileDescriptor, _ newName: [UInt8]) throws(SystemError) {
        do {
            switch self {
            case .noreplace: try from.renameNoReplace(name, to: to, newName)
            case .rename: try from.rename(name, to: to, newName)
            }
        } catch where isTaken(error) {
            throw SystemError(error.operation, newName, .exists)
        }
    }
}
