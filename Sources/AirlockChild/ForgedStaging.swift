#if DEBUG
import AirlockPolicy
import AirlockSystem

/// Test-only faults of a subverted decoder that lies: it writes into staging
/// what the policy forbids, then reports success. Compiled into debug builds
/// only and selected like the other test faults (AIRLOCK_TEST_DECODER_FAULT);
/// the supervisor's audit of staging must refuse each.
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
        default:
            return
        }
    }

    private static func forge(_ files: [(String, [UInt8])], policy: Policy) -> Never {
        let staging = Confinement.stagingDescriptor
        var bytes: Int64 = 0
        for (name, content) in files {
            do {
                let fd = try staging.open(Array(name.utf8), [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
                try fd.closeAfter { (fd) throws(SystemError) in
                    try fd.writeAll(content)
                    try fd.changeMode(FileMode(policy.fileMode))
                }
            } catch {
                DecoderChild.printError("airlock-decoder: test fault: cannot forge \(name): \(error)")
                CurrentProcess.abort()
            }
            bytes += Int64(content.count)
        }
        let message = VerdictMessage(.accepted(VerdictMessage.Accepted(
            files: Int64(files.count), directories: 0, entries: Int64(files.count), bytesWritten: bytes)))
        try? Confinement.resultDescriptor.writeAll(Array(message.jsonText.utf8))
        CurrentProcess.exit(0)
    }
}
#endif
