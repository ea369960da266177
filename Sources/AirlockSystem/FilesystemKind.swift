import CAirlockShims

/// What kind of filesystem a descriptor is on, as far as a fleet cares: one that
/// other hosts may share (NFS, CephFS, GlusterFS, SMB, any FUSE filesystem),
/// where inotify does not see other hosts' writes and leases do not reach them.
public struct FilesystemKind: Sendable, Equatable, CustomStringConvertible {
    /// statfs(2)'s f_type.
    public let magic: Int64

    /// The names of the magic numbers of linux/magic.h a fleet may meet.
    static let names: [Int64: String] = [
        0xEF53: "ext4", 0x5846_5342: "xfs", 0x9123_683E: "btrfs", 0x0102_1994: "tmpfs", 0x2FC1_2FC1: "zfs",
        0x6969: "nfs", 0x00C3_6400: "ceph", 0x6573_5546: "fuse", 0xFF53_4D42: "cifs", 0xFE53_4D42: "smb2",
        0x0BD0_0BD0: "lustre", 0x4750_4653: "gpfs", 0x5346_414F: "afs", 0x0027_e0eb: "cgroup",
    ]
    /// Filesystems other hosts may share.
    static let shared: Set<Int64> = [0x6969, 0x00C3_6400, 0x6573_5546, 0xFF53_4D42, 0xFE53_4D42, 0x0BD0_0BD0, 0x4750_4653, 0x5346_414F]

    /// fstatfs(2) of the descriptor.
    public init(of fd: FileDescriptor) throws(SystemError) {
        var type: Int64 = 0
        _ = try retrying("fstatfs") { airlock_filesystem_type(fd.rawValue, &type) }
        magic = type
    }

    public var isNetworkOrFUSE: Bool { FilesystemKind.shared.contains(magic) }

    /// ext4 (or ext2 and ext3, which share its magic number and driver).
    public var isExt4: Bool { magic == 0xEF53 }

    public var description: String { FilesystemKind.names[magic] ?? "0x" + String(magic, radix: 16) }
}
