import AirlockSystem

/// OpenSSH's sftp-server renames without the posix-rename extension (sftp's
/// `rename -l`, and what many Windows clients send as SSH_FXP_RENAME) by
/// link(2) to the new name, then unlink(2) of the old one. Between the two the
/// drop has two links, the other one its temporary name in the same inbox: a
/// rename in progress, not a hard link a producer made to confuse airlock.
public enum LinkedRename {
    /// Whether `name`, whose status is `status`, has exactly one other link in
    /// `inbox` and that link is a temporary name (`isTemporary`). Lists the inbox:
    /// asked only of a regular file with two links.
    public static func inProgress(_ name: [UInt8], _ status: FileStatus, in inbox: FileDescriptor,
                                  isTemporary: ([UInt8]) -> Bool) -> Bool {
        guard status.kind == .regular, status.linkCount == 2, let names = try? inbox.entryNames() else { return false }
        for other in names where other != name && isTemporary(other) {
            guard let linked = try? inbox.status(of: other) else { continue }
            if linked.device == status.device && linked.inode == status.inode { return true }
        }
        return false
    }
}
