import AirlockPolicy
import AirlockSystem
import AirlockText

/// What both decoder programs (`ArchiveDecoderProgram`, `KeyedDecoderProgram`)
/// say to the supervisor from inside the child, whichever format it reads: the
/// verdict written to the result pipe with what confinement was granted, the
/// verdicts of a child that may not decode or whose system call failed, and its
/// exit statuses.
public enum DecoderProgram {
    /// Exit status for arguments the supervisor should never have produced.
    public static let usageStatus: Int32 = 64

    /// Adds what confinement was granted to a verdict and writes it to the result
    /// pipe; the child's exit status.
    public static func report(_ message: inout VerdictMessage, _ confinement: ConfinementReport, program: String) -> Int32 {
        message.confinement = VerdictMessage.ConfinementFields(
            landlockABI: Int64(confinement.landlockABI), landlockState: confinement.landlockState.rawValue,
            seccompState: confinement.seccompState.rawValue,
            problems: confinement.problems.isEmpty ? nil : confinement.problems.joined(separator: "; "))
        do {
            try Confinement.resultDescriptor.writeAll(Array(message.jsonText.utf8))
        } catch {
            printError("\(program): cannot report: \(error)")
            return 71
        }
        return 0
    }

    /// The verdict of a child that may not decode: the kernel offers a mechanism
    /// that something refused, and confinement is required. The drop is not read.
    public static func unconfined(_ confinement: ConfinementReport) -> VerdictMessage {
        VerdictMessage(.unconfined(detail: confinement.problems.joined(separator: "; ")))
    }

    /// The verdict for a failed system call: `stage` tells the supervisor whether
    /// the drop could not be read or staging could not be written.
    public static func failure(_ error: SystemError, while stage: SystemFailureStage = .writingStaging) -> VerdictMessage {
        if error.errno == .fileTooLarge {
            // The kernel's RLIMIT_FSIZE stopped a write our own count should have stopped first.
            return VerdictMessage(.rejected(VerdictMessage.Rejected(
                reason: Reason.fileTooLarge.rawValue, detail: "the kernel refused a write past the file-size limit: \(error)")))
        }
        return VerdictMessage(.failed(VerdictMessage.Failed(stage: stage.rawValue, errno: error.errno.rawValue, detail: error.description)))
    }

    /// Says on the result pipe that this child holds the drop, is confined, and
    /// reads it next (`TakenNotice`): from here on what it reports, or how it
    /// dies, is a verdict on the drop. False when the pipe refused it; the child
    /// then exits, and the drop is retried.
    public static func announceTaken(program: String) -> Bool {
        #if DEBUG
        // Test-only: a child that dies on the start path, just short of taking its
        // drop, about one in `every`. Chosen by the microsecond of its start, not by
        // its pid: a run that starts the same number of processes and threads each
        // time would give a drop's retries the same pid modulo `every`, and fail it
        // on every retry.
        if let text = CurrentProcess.environment("AIRLOCK_TEST_START_FAULT_EXIT"), let every = UInt64(text), every > 0,
           (monotonicNanoseconds() / 1_000) % every == 0 {
            printError("\(program): test fault: start-exit")
            CurrentProcess.exit(ChildStart.unusedStatus)
        }
        #endif
        do {
            try Confinement.resultDescriptor.writeAll(TakenNotice.line)
            return true
        } catch {
            printError("\(program): cannot say the drop is taken: \(error)")
            return false
        }
    }

    public static func printError(_ text: String) {
        try? FileDescriptor(rawValue: 2).writeAll(Array((DisplayText.escaping(text) + "\n").utf8))
    }
}
