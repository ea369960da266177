#if DEBUG
import AirlockPolicy
import AirlockSystem

/// Test-only faults of a subverted decoder that lies: it writes into staging
/// what the policy forbids, then reports success (the supervisor's audit of
/// staging must refuse each), or announces a large file as written and then
/// changes what is at its name (the manifest must hash what is there at the
/// end). Compiled into debug builds only and selected like the other test
/// faults (AIRLOCK_TEST_DECODER_FAULT).
package enum ForgedStaging {
    /// Writes the forged files for `fault` and exits with an accepted verdict;
    /// returns for a fault it does not know.
    package static func inject(_ fault: String, policy: Policy) {
        switch fault {
        case "forge-collision":
            // Two names the filesystem keeps apart and full case folding calls one.
            forge([("\u{DF}.txt", [0x31]), ("\u{1E9E}.txt", [0x32])], policy: policy)
        case "forge-control-name":
            forge([("a\u{1}b.txt", [0x31])], policy: policy)
        case "forge-file-too-large":
            forge([("big.bin", [UInt8](repeating: 0x61, count: Int(policy.maxFileBytes) + 1))], policy: policy)
        case "forge-entry-count":
            let files = (0...policy.maxEntries).map { ("f\($0)", [UInt8]()) }
            forge(files, policy: policy)
        case "forge-rewrite-mapped":
            rewriteAfterNotice(policy: policy, throughMapping: true)
        case "forge-replace-announced":
            rewriteAfterNotice(policy: policy, throughMapping: false)
        default:
            return
        }
    }

    /// Writes `big.bin` (2 MiB of "a"), announces it as written, gives the
    /// supervisor time to hash it, and then makes `big.bin` hold "b"s: through a
    /// shared writable mapping kept from before the close, or by renaming
    /// another file over the name. Reports the one file as accepted.
    private static func rewriteAfterNotice(policy: Policy, throughMapping: Bool) -> Never {
        let staging = Confinement.stagingDescriptor
        let size = 2 << 20
        let name = Array("big.bin".utf8)
        do {
            let fd = try staging.open(name, [.readWrite, .create, .exclusive, .noFollow], mode: FileMode(policy.stagedFileMode))
            var mapping: UnsafeMutableRawBufferPointer?
            try fd.closeAfter { (fd) throws(SystemError) in
                try fd.writeAll([UInt8](repeating: 0x61, count: size))
                if throughMapping {
                    mapping = LateWrites.mapForWriting(fd, length: size)
                    if mapping == nil { throw SystemError("mmap", name, Errno.current) }
                }
            }
            try Confinement.resultDescriptor.writeAll(WrittenFileNotice.line(for: name))
            WallClock.sleep(milliseconds: 500)
            if let mapping {
                LateWrites.overwrite(mapping, with: 0x62)
            } else {
                let other = Array("big.new".utf8)
                try staging.open(other, [.writeOnly, .create, .exclusive, .noFollow], mode: FileMode(policy.stagedFileMode)).closeAfter { (fd) throws(SystemError) in
                    try fd.writeAll([UInt8](repeating: 0x62, count: size))
                }
                try staging.rename(other, to: staging, name)
            }
        } catch {
            DecoderProgram.printError("airlock-decoder: test fault: cannot rewrite big.bin: \(error)")
            CurrentProcess.abort()
        }
        let message = VerdictMessage(.accepted(VerdictMessage.Accepted(files: 1, directories: 0, entries: 1, bytesWritten: Int64(size))),
                                     types: [DetectedType(entry: "big.bin", type: "text/plain")], classes: [])
        try? Confinement.resultDescriptor.writeAll(Array(message.jsonText.utf8))
        CurrentProcess.exit(0)
    }

    private static func forge(_ files: [(String, [UInt8])], policy: Policy) -> Never {
        let staging = Confinement.stagingDescriptor
        var bytes: Int64 = 0
        for (name, content) in files {
            do {
                let fd = try staging.open(Array(name.utf8), [.writeOnly, .create, .exclusive, .noFollow], mode: FileMode(policy.stagedFileMode))
                try fd.closeAfter { (fd) throws(SystemError) in
                    try fd.writeAll(content)
                }
            } catch {
                DecoderProgram.printError("airlock-decoder: test fault: cannot forge \(name): \(error)")
                CurrentProcess.abort()
            }
            bytes += Int64(content.count)
        }
        let message = VerdictMessage(.accepted(VerdictMessage.Accepted(
            files: Int64(files.count), directories: 0, entries: Int64(files.count), bytesWritten: bytes)), classes: [])
        try? Confinement.resultDescriptor.writeAll(Array(message.jsonText.utf8))
        CurrentProcess.exit(0)
    }
}
#endif
