import AirlockFormats

/// The name and link target of the next tar entry, from whichever header gives
/// them: a pax record, else a GNU long-name header, else the entry's own header.
///
/// These are the archive's bytes as they stand. libarchive hands back a
/// converted name instead: it cuts a pax or long name at its first NUL (C
/// strings), and converts every pax name (UTF-8) to NFC on platforms other than
/// macOS, so a name written in NFD comes back spelled differently. The scan
/// judges and writes these bytes, and requires libarchive's name to be the same
/// or canonically equivalent.
package struct TarEntryNames {
    private var paxPath: [UInt8]?
    private var paxSparseName: [UInt8]?
    private var paxLinkPath: [UInt8]?
    private var longName: [UInt8]?
    private var longLink: [UInt8]?

    /// Takes a pax record's value if its key names the entry; the failure, if the
    /// value is one the readers would read differently.
    mutating func takePax(key: String, value: ArraySlice<UInt8>) -> String? {
        switch key {
        case "path", "GNU.sparse.name":
            // An empty one: libarchive keeps the header's name, tarfile takes the empty one.
            guard !value.isEmpty else { return "an empty pax \(key) record" }
            if key == "path" { paxPath = Array(value) } else { paxSparseName = Array(value) }
        case "linkpath":
            guard !value.isEmpty else { return "an empty pax linkpath record" }
            paxLinkPath = Array(value)
        default:
            break
        }
        return nil
    }

    /// Takes a GNU long-name header's data: the name runs to its first NUL, as
    /// every reader reads it; bytes after that NUL are hidden from all of them,
    /// so any that is not padding makes the failure.
    mutating func takeLong(_ data: [UInt8], link: Bool) -> String? {
        let end = data.firstIndex(of: 0) ?? data.endIndex
        guard data[end...].allSatisfy({ $0 == 0 }) else {
            return "a GNU long \(link ? "link" : "name") holds bytes after its terminating NUL"
        }
        // Only its NUL: libarchive falls back to the header's name, tarfile takes the empty one.
        guard end > 0 else { return "an empty GNU long \(link ? "link" : "name")" }
        if link { longLink = Array(data[..<end]) } else { longName = Array(data[..<end]) }
        return nil
    }

    /// The name of the entry whose own header is `header`, and why the readers
    /// would disagree on its names if they would; starts afresh for the next entry.
    mutating func resolve(_ header: TarHeader) -> (name: [UInt8], problem: String?) {
        defer { self = TarEntryNames() }
        // libarchive lets GNU.sparse.name beat path; tarfile takes whichever record comes last.
        if let paxSparseName, let paxPath, paxSparseName != paxPath {
            return (header.name, "a pax path and a GNU.sparse.name record name one entry differently")
        }
        // GNU tar lets a pax path beat a long-name header, libarchive and tarfile the reverse.
        if (paxPath != nil || paxSparseName != nil) && longName != nil || paxLinkPath != nil && longLink != nil {
            return (header.name, "both a GNU long name and a pax path name one entry")
        }
        let link = paxLinkPath ?? longLink ?? header.linkName
        // Links are refused whatever their target, but a target that a NUL cuts
        // short in one reader and not in another is a second view of the entry.
        if link.contains(0) { return (header.name, "a link target holds a NUL byte") }
        return (paxSparseName ?? paxPath ?? longName ?? header.name, nil)
    }
}

extension TarEntryNames {
    /// What a tar entry's name means once the writer's `./` is taken off.
    package enum Relative: Equatable {
        /// `./` or `.`: the directory the archive extracts into, nothing to create.
        case extractionRoot
        case name([UInt8])
    }

    /// Takes one leading `./` off a tar entry's name.
    ///
    /// Archiving `.` names every entry `./NAME` and stores `./` itself (GNU tar's
    /// `tar -cf x.tar .`, Python's `shutil.make_archive` with `root_dir` alone).
    /// bsdtar, GNU tar and tarfile all extract `./NAME` as `NAME`, so the readers
    /// agree and the path policy judges `NAME`. Only one prefix is taken: `././a`
    /// still reaches the policy as `./a` and is refused for its `.` component.
    package static func relative(_ name: [UInt8]) -> Relative {
        let dot = UInt8(ascii: "."), slash = UInt8(ascii: "/")
        if name == [dot] || name == [dot, slash] { return .extractionRoot }
        if name.count > 2 && name[0] == dot && name[1] == slash { return .name(Array(name[2...])) }
        return .name(name)
    }
}
