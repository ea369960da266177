import AirlockPolicy

/// The outbox entry's name for a drop: the drop's name without its archive
/// suffixes, then `-2`, `-3`, … while taken; the drop's id when the name would
/// fail the component policy.
enum OutboxName {
    static let suffixes = [".tar.gz", ".tar.bz2", ".tar.xz", ".tar.zst", ".tar.lz", ".tar.lzma", ".tgz", ".tar", ".zip", ".7z", ".plist", ".archive"]

    /// The name to try first.
    static func base(for dropName: [UInt8], id: String, policy: Policy) -> [UInt8] {
        var name = dropName
        let lowered = dropName.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        for suffix in suffixes {
            let bytes = Array(suffix.utf8)
            if lowered.count > bytes.count, Array(lowered.suffix(bytes.count)) == bytes {
                name = Array(dropName.dropLast(bytes.count))
                break
            }
        }
        guard let path = try? EntryPath(validating: name, policy: policy), path.depth == 1, !path.hasTrailingSlash,
              name.first != UInt8(ascii: "."), name.count <= 251 else {
            // 251 leaves room for "-999" within NAME_MAX.
            return Array(id.utf8)
        }
        return name
    }

    /// The candidates in order: base, base-2, … base-999.
    static func candidates(base: [UInt8]) -> some Sequence<[UInt8]> {
        (1...999).lazy.map { $0 == 1 ? base : base + Array("-\($0)".utf8) }
    }
}
