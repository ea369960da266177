/// The formats a configuration may add to the default list, recognised by their
/// first bytes like the others (an ISO 9660 image by its volume descriptor).
extension ArchiveFormat {
    /// RAR 1.5 to 4 ("Rar!" 1A 07 00) and RAR 5 ("Rar!" 1A 07 01 00); a CAB
    /// ("MSCF" and four reserved zero bytes); a cpio in the portable ASCII
    /// formats, newc ("070701") and odc ("070707"). Not newc with checksums
    /// ("070702"): libarchive does not verify them where GNU cpio does, so the
    /// two would disagree on a damaged archive. Nor the old binary cpio.
    static func sniffOptional(_ prefix: [UInt8]) -> ArchiveFormat? {
        func starts(_ magic: [UInt8]) -> Bool { prefix.count >= magic.count && Array(prefix.prefix(magic.count)) == magic }
        let rar: [UInt8] = [0x52, 0x61, 0x72, 0x21, 0x1A, 0x07]
        if starts(rar + [0x00]) || starts(rar + [0x01, 0x00]) { return .rar }
        if starts([0x4D, 0x53, 0x43, 0x46, 0, 0, 0, 0]) { return .cab }
        if starts(Array("070701".utf8)) || starts(Array("070707".utf8)) { return .cpio }
        return nil
    }

    /// Where an ISO 9660 image's first volume descriptor is: sector 16 of 2048 bytes.
    public static let isoDescriptorOffset: Int64 = 16 * 2048

    /// Whether the bytes at `isoDescriptorOffset` open a volume descriptor
    /// (a type byte, "CD001", version 1).
    public static func isISO9660Descriptor(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 7 && Array(bytes[1..<6]) == Array("CD001".utf8) && bytes[6] == 1
    }

    /// Whether the format is one the configuration must name to be read; its
    /// magic was found, so a first header libarchive refuses is damage, not
    /// another format.
    package var isOptional: Bool { self == .rar || self == .iso9660 || self == .cab || self == .cpio }
}
