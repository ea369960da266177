import AirlockSystem
import Foundation

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
/// It keeps the two capabilities the service's unit grants, CAP_LEASE and
/// CAP_DAC_READ_SEARCH, and no other.
public enum RootAccess {
    /// Becomes the owner of `path` when running as the superuser and the owner is
    /// someone else; returns what it did, for the log, or nil.
    public static func assumeOwner(of path: String) throws(RootAccessError) -> String? {
        guard Accounts.effectiveUserID == 0 else { return nil }
        guard let st = try? FileStatus(path: path), st.owner != 0 else { return nil }
        let account = Accounts.user(st.owner)
        let name = account?.name
        let group = account?.group ?? st.group
        do {
            // What the unit grants the service, so that a command run by root reads and
            // leases producers' files as the daemon would (a mode-0600 drop included).
            try Accounts.become(uid: st.owner, group: group, name: name, keeping: [Capabilities.lease, Capabilities.dacReadSearch])
        } catch {
            throw RootAccessError("cannot act as the owner of \(path) (uid \(st.owner)): \(error.errno); run the command as that user")
        }
        return "acting as \(name ?? "uid \(st.owner)") (uid \(st.owner)), the owner of \(path)"
    }

    static func userName(_ uid: UInt32) -> String? { Accounts.user(uid)?.name }

    /// Opens the root and each of its directories as a command will, and turns a
    /// refusal into a RootAccessError naming the path and the fix; anything else
    /// is left for RootLayout.open to report.
    public static func check(_ path: String) throws(RootAccessError) {
        var components: [[String]] = [[], ["airlock.json"]]
        components += RootLayout.directories.map(\.path)
        for parts in components {
            let full = ([path] + parts).joined(separator: "/")
            do {
                try FileDescriptor.open(path: full, parts == ["airlock.json"] ? [.readOnly, .noFollow] : [.readOnly, .directory]).close()
            } catch where error.errno == .permissionDenied || error.errno == .notPermitted {
                throw RootAccessError(refusal(full, error.errno, root: path))
            } catch {
                continue
            }
        }
    }

    static func refusal(_ full: String, _ errno: Errno, root: String) -> String {
        let owner = (try? FileStatus(path: root)).map { userName($0.owner) ?? "uid \($0.owner)" } ?? "the root's owner"
        return "permission denied: \(full): \(errno); run airlock as \(owner) (sudo -u \(owner) airlock …) or as root, "
            + "or give this user access with the groups deploy/README.md describes"
    }
}
