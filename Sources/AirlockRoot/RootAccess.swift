import AirlockConfiguration
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
    ///
    /// The path is walked without following a link another user owns (TrustedPath):
    /// such a link could lead a superuser to a directory root owns (`/etc`) and so
    /// keep it root while it works there. With `orNearestAbove` (init), a root
    /// that does not exist yet is judged by the nearest directory above it that does.
    public static func assumeOwner(of path: String, orNearestAbove: Bool = false) throws(RootAccessError) -> String? {
        guard Accounts.effectiveUserID == 0 else { return nil }
        var candidate = path
        while true {
            let status: FileStatus
            do throws(SystemError) {
                status = try TrustedPath.openDirectory(path: candidate).closeAfter { (fd) throws(SystemError) in try fd.status() }
            } catch where error.errno == .tooManyLinks && error.operation.hasPrefix("refuse") {
                throw RootAccessError("\(path): \(error.operation) on the way (\(error.name ?? "")); as root, airlock follows only root's "
                                      + "own links to a root: give the path it points to")
            } catch where error.errno == .noEntry && orNearestAbove {
                let parent = ConfigurationSource.split(candidate).0
                guard parent != candidate else { return nil }
                candidate = parent
                continue
            } catch {
                return nil
            }
            // What the unit grants the service, so that a command run by root reads and
            // leases producers' files as the daemon would (a mode-0600 drop included).
            return try become(status.owner, group: status.group, path: candidate,
                              keeping: [Capabilities.lease, Capabilities.dacReadSearch])
        }
    }

    /// Becomes the owner of the directory holding a configuration file before the
    /// file is read (see ConfigurationSource), when running as the superuser.
    public static func assumeOwner(of source: ConfigurationSource) throws(RootAccessError) -> String? {
        guard Accounts.effectiveUserID == 0 else { return nil }
        let (directory, _) = ConfigurationSource.split(source.path)
        // Nothing kept: the file's `root` key must not lead the owner, with root's
        // capabilities, into a root it could not open itself.
        return try become(source.owner, group: source.group, path: directory, keeping: [])
    }

    /// Becomes `owner` (with its groups), unless that is root; a note for the log.
    static func become(_ owner: UInt32, group: UInt32?, path: String, keeping: [Int]) throws(RootAccessError) -> String? {
        guard owner != 0 else { return nil }
        let account = Accounts.user(owner)
        let name = account?.name
        guard let group = account?.group ?? group else {
            throw RootAccessError("cannot act as the owner of \(path): uid \(owner) has no account; run the command as that user")
        }
        do {
            try Accounts.become(uid: owner, group: group, name: name, keeping: keeping)
        } catch {
            throw RootAccessError("cannot act as the owner of \(path) (uid \(owner)): \(error.errno); run the command as that user")
        }
        return "acting as \(name ?? "uid \(owner)") (uid \(owner)), the owner of \(path)"
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
