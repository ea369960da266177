import AirlockSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A root the caller may not use: the path, what was refused, and the fix.
/// Exit status 77 (EX_NOPERM), not 78: nothing is wrong with the root.
public struct RootAccessError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Who a command works on a root as. Run as the superuser on a root that
/// another user owns, a command becomes that user (its groups included) before
/// it touches anything, so nothing it writes (a rotated journal, a report, an
/// outbox entry) ends up owned by root where the service user could not change it.
public enum RootAccess {
    /// Becomes the owner of `path` when running as the superuser and the owner is
    /// someone else; returns what it did, for the log, or nil.
    public static func assumeOwner(of path: String) throws(RootAccessError) -> String? {
        guard geteuid() == 0 else { return nil }
        var st = stat()
        guard stat(path, &st) == 0, st.st_uid != 0 else { return nil }
        let account = user(st.st_uid)
        let name = account?.name
        let group = account?.group ?? st.st_gid
        // Supplementary groups first, then the group, then the user: each later
        // step gives up the right to take the earlier ones.
        let groupsSet = name.map { initgroups($0, group) } ?? setgroups(0, nil)
        guard groupsSet == 0, setgid(group) == 0, setuid(st.st_uid) == 0 else {
            throw RootAccessError("cannot act as the owner of \(path) (uid \(st.st_uid)): \(Errno.current); run the command as that user")
        }
        return "acting as \(name ?? "uid \(st.st_uid)") (uid \(st.st_uid)), the owner of \(path)"
    }

    /// The account of `uid` from the user database (getpwuid_r).
    static func user(_ uid: uid_t) -> (name: String, group: gid_t)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let found = result else { return nil }
        return (String(cString: found.pointee.pw_name), found.pointee.pw_gid)
    }

    static func userName(_ uid: uid_t) -> String? { user(uid)?.name }

    /// Opens the root and each of its directories as a command will, and turns a
    /// refusal into a RootAccessError naming the path and the fix; anything else
    /// is left for RootLayout.open to report.
    public static func check(_ path: String) throws(RootAccessError) {
        var components: [[String]] = [[], ["airlock.json"]]
        components += RootLayout.directories.map(\.path)
        for parts in components {
            let full = ([path] + parts).joined(separator: "/")
            let fd = open(full, O_RDONLY | O_CLOEXEC | (parts == ["airlock.json"] ? O_NOFOLLOW : O_DIRECTORY))
            if fd >= 0 {
                _ = close(fd)
                continue
            }
            let errno = Errno.current
            guard errno == .permissionDenied || errno == .notPermitted else { continue }
            throw RootAccessError(refusal(full, errno, root: path))
        }
    }

    static func refusal(_ full: String, _ errno: Errno, root: String) -> String {
        var st = stat()
        let owner = stat(root, &st) == 0 ? userName(st.st_uid) ?? "uid \(st.st_uid)" : "the root's owner"
        return "permission denied: \(full): \(errno); run airlock as \(owner) (sudo -u \(owner) airlock …) or as root, "
            + "or give this user access with the groups deploy/README.md describes"
    }
}
