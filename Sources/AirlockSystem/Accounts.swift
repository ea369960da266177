import CAirlockShims
#if canImport(Glibc)
import Glibc
#endif

/// The user and group databases, and the process's own credentials.
public enum Accounts {
    /// geteuid(2).
    public static var effectiveUserID: UInt32 { UInt32(geteuid()) }

    /// getuid(2): who started the process (sudo sets it to its target user).
    public static var realUserID: UInt32 { UInt32(getuid()) }

    /// Whether the account `name`, whose primary group is `primary`, belongs to
    /// `group`, by getgrouplist(3): its primary group or a supplementary one.
    public static func isMember(_ name: String, primary: GroupID, of group: GroupID) -> Bool {
        if primary == group { return true }
        var count: Int32 = 64
        while count <= 65536 {
            var groups = [gid_t](repeating: 0, count: Int(count))
            var found = count
            if getgrouplist(name, primary, &groups, &found) >= 0 {
                return groups.prefix(Int(found)).contains(group)
            }
            // -1 with `found` set to the number needed: ask again with room for it.
            count = max(found, count * 2)
        }
        return false
    }

    /// The account of `uid` from the user database, getpwuid_r(3): its name and
    /// primary group; nil when it has none or cannot be read.
    public static func user(_ uid: UInt32) -> (name: String, group: GroupID)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid_t(uid), &entry, &buffer, buffer.count, &result) == 0, let found = result else { return nil }
        return (String(cString: found.pointee.pw_name), found.pointee.pw_gid)
    }

    /// The id of the group `name`, getgrnam_r(3); nil when there is none.
    public static func group(named name: String) -> GroupID? {
        var entry = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, let found = result else { return nil }
        return found.pointee.gr_gid
    }

    /// Becomes `uid` for good: the supplementary groups first (initgroups(3) of
    /// `name`, or none at all without a name), then setgid(2), then setuid(2),
    /// since each later step gives up the right to take the earlier ones.
    ///
    /// - Parameter keeping: capabilities (by number) the superuser keeps as that
    ///   user, effective and permitted; every other one is given up.
    public static func become(uid: UInt32, group: GroupID, name: String?, keeping: [Int] = []) throws(SystemError) {
        if let name {
            guard initgroups(name, group) == 0 else { throw SystemError("initgroups", text: name, .current) }
        } else {
            guard setgroups(0, nil) == 0 else { throw SystemError("setgroups", nil, .current) }
        }
        guard setgid(group) == 0 else { throw SystemError("setgid", nil, .current) }
        if !keeping.isEmpty { _ = try retrying("prctl(PR_SET_KEEPCAPS)") { airlock_keep_capabilities(1) } }
        guard setuid(uid_t(uid)) == 0 else { throw SystemError("setuid", nil, .current) }
        guard !keeping.isEmpty else { return }
        _ = try retrying("prctl(PR_SET_KEEPCAPS)") { airlock_keep_capabilities(0) }
        let mask = keeping.reduce(UInt64(0)) { $0 | (1 << UInt64($1)) }
        _ = try retrying("capset") { airlock_limit_capabilities(mask) }
    }
}
