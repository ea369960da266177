import AirlockPolicy
import AirlockSystem
#if canImport(Glibc)
import Glibc
#endif

/// Walks what a decoder child left in staging before it is committed: only
/// directories and single-linked regular files with the policy's modes, within
/// the entry and depth limits. The child is not trusted to have obeyed; a
/// compromised one could plant a link. Optionally fsyncs everything it visits.
struct StagingAudit {
    let policy: Policy
    let fsyncEach: Bool

    struct Totals { var files: Int64 = 0; var directories: Int64 = 0; var bytes: Int64 = 0 }

    struct Failure: Error { let detail: String }

    func audit(_ staging: FileDescriptor) throws -> Totals {
        var totals = Totals()
        try walk(staging, depth: 0, path: [], totals: &totals)
        if fsyncEach { try staging.sync() }
        return totals
    }

    private func walk(_ directory: FileDescriptor, depth: Int, path: [UInt8], totals: inout Totals) throws {
        guard depth <= policy.maxDepth else { throw Failure(detail: "deeper than \(policy.maxDepth) levels") }
        for name in try directory.entryNames() {
            let child = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
            let status = try directory.status(of: name)
            guard totals.files + totals.directories < Int64(policy.maxEntries) * 2 + 2 else {
                throw Failure(detail: "more entries than the policy allows")
            }
            switch status.kind {
            case .directory:
                guard status.permissions == mode_t(policy.directoryMode) else {
                    throw Failure(detail: "directory \"\(EscapedName(child))\" has mode \(String(status.permissions, radix: 8))")
                }
                totals.directories += 1
                try directory.openDirectory(name).closeAfter { sub in
                    try walk(sub, depth: depth + 1, path: child, totals: &totals)
                    if fsyncEach { try sub.sync() }
                }
            case .regular:
                guard status.linkCount == 1, status.permissions == mode_t(policy.fileMode) else {
                    throw Failure(detail: "file \"\(EscapedName(child))\" has \(status.linkCount) links and mode \(String(status.permissions, radix: 8))")
                }
                totals.files += 1
                totals.bytes += status.size
                if fsyncEach {
                    try directory.open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK).closeAfter { (fd) throws(SystemError) in try fd.sync() }
                }
            default:
                throw Failure(detail: "\"\(EscapedName(child))\" is a \(status.kind)")
            }
        }
    }
}
