import AirlockSystem
import Foundation

/// How consumers hand back an outbox entry they have processed. They may read
/// `outbox/` but not write it, so nothing in it is anyone's but airlock's; each
/// consumer group has a directory `acks/GROUP/` (airlock's, group GROUP, 1730:
/// members may create names there but not list it, and may remove only their
/// own), and a member acknowledges an entry by creating a file there named by the
/// entry's drop id (the manifest's `id`, which holds random bits), not by its
/// name, so no one can acknowledge an entry in advance by guessing. An
/// acknowledgement counts only when it changed (its ctime, which no one can set)
/// after the entry landed. `outbox sweep` removes an entry once every configured
/// group has acknowledged it (`outbox.remove_when: "all"`) or any one has ("any").
public struct Acknowledgements {
    /// The directory beneath the root.
    public static let directoryName = "acks"
    /// Mode of each group's directory: the owner (airlock) everything, the group
    /// write and search only, sticky so a member removes only its own names.
    static let groupDirectoryMode: FileMode = 0o1730
    static let maxGroups = 16

    /// The group names of `outbox.acknowledging_groups`, each an existing group and
    /// usable as a directory name.
    static func validated(_ names: [String]) throws(ConfigurationError) -> [String] {
        guard names.count <= maxGroups, Set(names).count == names.count else {
            throw ConfigurationError("outbox.acknowledging_groups: must list at most \(maxGroups) different groups")
        }
        for name in names {
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                throw ConfigurationError("outbox.acknowledging_groups: \"\(name)\" is not a group name")
            }
            guard Accounts.group(named: name) != nil else {
                throw ConfigurationError("outbox.acknowledging_groups: no group named \"\(name)\" (create it, e.g. groupadd \(name))")
            }
        }
        return names
    }

    /// The groups whose acknowledgements count: `outbox.acknowledging_groups`, or
    /// `outbox.group` alone when that list is empty.
    public static func groups(_ configuration: Configuration) -> [String] {
        if !configuration.acknowledgingGroups.isEmpty { return configuration.acknowledgingGroups }
        return configuration.outboxGroup.isEmpty ? [] : [configuration.outboxGroup]
    }

    /// Brings a root's hand-back up to date, idempotently, as init and `run` do at
    /// start: `outbox/` loses group and other write (roots laid out before
    /// acknowledgements let consumers rename entries there; on a directory with an
    /// ACL this narrows its mask, so no named entry keeps write either), and
    /// `acks/` and each group's directory are made or given their group and mode.
    /// Returns what it changed, for the log.
    public static func prepare(root: FileDescriptor, _ configuration: Configuration) throws(ConfigurationError) -> [String] {
        var changed: [String] = []
        do throws(SystemError) {
            try root.openDirectory(Array("outbox".utf8)).closeAfter { (outbox) throws(SystemError) in
                let mode = try outbox.status().permissions
                if mode & 0o022 != 0 {
                    try outbox.changeMode(mode & ~0o022)
                    changed.append("outbox/ (mode \(String(mode, radix: 8)) to \(String(mode & ~0o022, radix: 8)): consumers acknowledge in acks/ now")
                }
            }
            let acks = Array(directoryName.utf8)
            if (try? root.status(of: acks)) == nil {
                try root.makeDirectory(acks, mode: 0o755)
                try root.openDirectory(acks).closeAfter { (fd) throws(SystemError) in try fd.changeMode(0o755) }
                changed.append(directoryName + "/")
            }
            try root.openDirectory(acks).closeAfter { (acks) throws(SystemError) in
                for group in groups(configuration) { changed += try prepareGroup(group, in: acks) }
            }
        } catch where error.errno == .notPermitted {
            throw ConfigurationError("root: cannot give \(directoryName)/\(error.name ?? "") its group: \(error); airlock must belong to each "
                                     + "of outbox.acknowledging_groups (usermod -aG GROUP airlock), or root makes the directory: "
                                     + "install -d -o airlock -g GROUP -m 1730 ROOT/\(directoryName)/GROUP")
        } catch {
            throw ConfigurationError("root: cannot lay out the hand-back (\(directoryName)/, outbox/): \(error)")
        }
        return changed
    }

    /// Makes `acks/GROUP` or puts its group and mode right.
    private static func prepareGroup(_ group: String, in acks: FileDescriptor) throws(SystemError) -> [String] {
        let name = Array(group.utf8)
        var changed: [String] = []
        do throws(SystemError) {
            try acks.makeDirectory(name, mode: 0o700)
            changed.append("\(directoryName)/\(group)/")
        } catch where error.errno == .exists {}
        guard let gid = Accounts.group(named: group) else { return changed }
        try acks.openDirectory(name).closeAfter { (directory) throws(SystemError) in
            let status = try directory.status()
            guard status.group != gid || status.permissions != groupDirectoryMode else { return }
            do throws(SystemError) {
                try directory.changeGroup(gid)
            } catch {
                throw SystemError(error.operation, name, error.errno)
            }
            try directory.changeMode(groupDirectoryMode)
            if changed.isEmpty { changed.append("\(directoryName)/\(group)/ (group and mode 1730)") }
        }
        return changed
    }
}
