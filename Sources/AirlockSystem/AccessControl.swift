import CAirlockShims

/// A POSIX access control list that grants one more user than the owner: the
/// owner's rights, `user`'s rights, nothing for the group or others. For a file
/// or directory only one other user may read (a producer's receipts).
public struct UserGrant: Sendable, Equatable {
    public let owner: FileMode
    public let user: UInt32
    public let rights: FileMode

    /// - Parameters: `owner` and `rights` are rwx bits (0o7 at most).
    public init(owner: FileMode, user: UInt32, rights: FileMode) {
        precondition(owner <= 0o7 && rights <= 0o7, "ACL rights are three bits")
        self.owner = owner
        self.user = user
        self.rights = rights
    }

    /// The kernel's xattr form (linux/posix_acl_xattr.h): version 2, then
    /// {u16 tag, u16 perm, u32 id} little-endian, sorted by tag.
    var xattrValue: [UInt8] {
        let undefined = UInt32.max
        // ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER
        let entries: [(UInt16, UInt16, UInt32)] = [
            (0x01, UInt16(owner), undefined), (0x02, UInt16(rights), user), (0x04, 0, undefined),
            (0x10, UInt16(rights), undefined), (0x20, 0, undefined),
        ]
        var bytes = le(UInt32(2))
        for (tag, perm, id) in entries { bytes += le(tag) + le(perm) + le(id) }
        return bytes
    }

    private func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}

extension FileDescriptor {
    /// Sets this file's access ACL, or with `inherited` a directory's default ACL
    /// (what files created in it start with): fsetxattr(2) of
    /// `system.posix_acl_access` / `system.posix_acl_default`.
    ///
    /// - Throws: `SystemError` "fsetxattr": EOPNOTSUPP where the filesystem has no ACLs.
    public func setAccessControl(_ grant: UserGrant, inherited: Bool = false) throws(SystemError) {
        let value = grant.xattrValue
        _ = try value.withUnsafeBytes { raw in
            Result { () throws(SystemError) in
                try retrying("fsetxattr") { airlock_set_posix_acl(rawValue, inherited ? 1 : 0, raw.baseAddress, raw.count) }
            }
        }.get()
    }
}
