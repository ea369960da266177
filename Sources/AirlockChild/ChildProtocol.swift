import AirlockPolicy
import AirlockSystem

/// What every decoder child says to the supervisor, whichever format it reads:
/// the verdict written to the result pipe with what confinement was granted,
/// the verdicts of a child that may not decode or whose system call failed,
/// and its exit statuses. The archive decoder adds its `main` to this type.
public enum DecoderChild {
    /// Exit status for arguments the supervisor should never have produced.
    public static let usageStatus: Int32 = 64

    /// Adds what confinement was granted to a verdict and writes it to the result
    /// pipe; the child's exit status.
    public static func report(_ json: inout JSONObjectWriter, _ confinement: ConfinementReport, program: String) -> Int32 {
        json.add("landlock_abi", Int64(confinement.landlockABI))
        json.add("landlock", confinement.landlock ? 1 : 0)
        json.add("seccomp", confinement.seccomp ? 1 : 0)
        json.add("landlock_state", confinement.landlockState.rawValue)
        json.add("seccomp_state", confinement.seccompState.rawValue)
        if !confinement.problems.isEmpty { json.add("confinement_problems", confinement.problems.joined(separator: "; ")) }
        do {
            try Confinement.resultDescriptor.writeAll(Array(json.text.utf8))
        } catch {
            printError("\(program): cannot report: \(error)")
            return 71
        }
        return 0
    }

    /// The verdict of a child that may not decode: the kernel offers a mechanism
    /// that something refused, and confinement is required. The drop is not read.
    public static func unconfined(_ confinement: ConfinementReport) -> JSONObjectWriter {
        var json = JSONObjectWriter()
        json.add("verdict", "unconfined")
        json.add("detail", confinement.problems.joined(separator: "; "))
        return json
    }

    /// The verdict for a failed system call: `stage` tells the supervisor whether
    /// the drop could not be read or staging could not be written.
    public static func failure(_ error: SystemError, while stage: SystemFailureStage = .writingStaging) -> JSONObjectWriter {
        var json = JSONObjectWriter()
        if error.errno == .fileTooLarge {
            // The kernel's RLIMIT_FSIZE stopped a write our own count should have stopped first.
            json.add("verdict", "rejected")
            json.add("reason", Reason.fileTooLarge.rawValue)
            json.add("detail", "the kernel refused a write past the file-size limit: \(error)")
            return json
        }
        json.add("verdict", "error")
        json.add("stage", stage.rawValue)
        json.add("errno", Int64(error.errno.rawValue))
        json.add("detail", error.description)
        return json
    }

    public static func printError(_ text: String) {
        try? FileDescriptor(rawValue: 2).writeAll(Array((text + "\n").utf8))
    }
}
