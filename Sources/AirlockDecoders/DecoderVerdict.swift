import AirlockChild
import AirlockConfiguration
import AirlockEvents
import AirlockPolicy
import AirlockSystem
import Foundation

/// What the supervisor makes of a decoder child's run. The child's JSON is
/// believed only as far as it is well-formed and names a reason the decoder may
/// give; an accepted verdict is audited against staging before any commit.
package enum DecoderVerdict: Equatable {
    case accepted(files: Int64, bytes: Int64)
    case rejected(Rejection)
    case deferred(String)

    /// Reasons a decoder may report; anything else is a misbehaving child.
    static let decoderReasons: Set<Reason> = [
        .unsafePath, .unsupportedEntryType, .duplicatePath, .pathConflict, .nameCollision, .nameTooLong, .tooDeep,
        .tooManyEntries, .fileTooLarge, .totalTooLarge, .ratioTooHigh, .corruptArchive, .encryptedEntry, .unsupportedFormat,
        .wrongRootClass, .unknownClass, .unsupportedSchema, .invalidField, .dropTooLarge, .decoderFailed,
    ]

    package static func interpret(_ run: DecoderProcess.Run, timeoutSeconds: Int64) -> DecoderVerdict {
        if run.abandoned {
            return .deferred("abandoned: airlock stopped before the decoder finished; the drop stays claimed")
        }
        if let deferral = machineryFault(run) { return .deferred(deferral) }
        if run.timedOut {
            return .rejected(Rejection(.decoderFailed, "the decoder ran past its \(timeoutSeconds)-second limit and was killed"))
        }
        guard run.termination == .exited(0) else {
            var detail = "the decoder \(run.termination)"
            if case .signalled(let signal) = run.termination, signal == SIGXCPU || signal == SIGKILL {
                detail += " (a resource limit: CPU time or address space)"
            }
            return .rejected(Rejection(.decoderFailed, detail))
        }
        let message: VerdictMessage
        switch run.message {
        case .success(let read): message = read
        case .failure(.refused(let refusal)): return .rejected(Rejection(.decoderFailed, refusal.description))
        case .failure(.unreadable): return .rejected(Rejection(.decoderFailed, "the decoder exited without a readable verdict"))
        }
        switch message.outcome {
        case .accepted(let accepted):
            return .accepted(files: accepted.files, bytes: accepted.bytesWritten)
        case .rejected(let rejected):
            return .rejected(Rejection(rejected) ?? Rejection(.decoderFailed, "the decoder gave an unknown reason"))
        case .unconfined(let detail):
            // Not the drop's fault: it waits until the decoders can be confined again.
            return .deferred("no decoder runs unconfined: \(detail); "
                + "'airlock doctor' says what is missing (\(SettingDefinition.decoderConfinement.name) \"best-effort\" opts out)")
        case .failed(let failed):
            return interpret(failed)
        case .unavailable(let detail):
            // The child could not load what it needs to judge (the magic database): not the drop's fault.
            return .deferred(detail)
        case .probe, .listing:
            return .rejected(Rejection(.decoderFailed, "the decoder gave an unknown verdict"))
        }
    }

    /// Why a run is no verdict on its drop, or nil when it is one: a child that
    /// never said it had taken the drop (`TakenNotice`) judged nothing, whatever
    /// its exit, and so did one of another build. The verdicts a child gives
    /// before taking the drop (`unconfined`, `unavailable`) defer on their own.
    package static func machineryFault(_ run: DecoderProcess.Run) -> String? {
        if run.speaksAnotherVersion {
            return "the decoder program on disk speaks another version than this airlock "
                + "(request \(DecoderRequest.currentVersion), verdict \(VerdictMessage.currentVersion)); "
                + "its templates are restarted and the drop is retried"
        }
        guard run.taken == nil else { return nil }
        if case .success(let message) = run.message {
            switch message.outcome {
            case .unconfined, .unavailable: return nil
            default: break
            }
        }
        let how = run.timedOut ? "ran past its limit" : "\(run.termination)"
        return "the decoder child \(how) before it took the drop (not started, handed over or given its go-ahead); "
            + "retried with a fresh child"
    }

    /// A failed system call in the child: defer what the environment caused, reject the rest.
    private static func interpret(_ failed: VerdictMessage.Failed) -> DecoderVerdict {
        let errno = Errno(rawValue: failed.errno)
        let detail = failed.detail
        // A drop the disk cannot read is not judged on its bytes: it waits, claimed.
        if failed.stage == SystemFailureStage.readingDrop.rawValue {
            if errno.isEnvironmental { return .deferred("reading the drop failed: \(detail)") }
            return .rejected(Rejection(.decoderFailed, "the decoder could not read the drop: \(detail)"))
        }
        if errno.isEnvironmental { return .deferred("writing to staging failed: \(detail)") }
        if errno == .exists {
            return .rejected(Rejection(.nameCollision, "the filesystem treats two entry names as one: \(detail)"))
        }
        return .rejected(Rejection(.decoderFailed, "the decoder failed: \(detail)"))
    }
}

extension VerdictMessage {
    /// Why the supervisor does not believe what a child wrote.
    package enum ReadFailure: Error {
        /// Not a JSON object with the fields a verdict has, each of its type.
        case unreadable(any Error)
        /// A verdict of another version or an unknown kind.
        case refused(Refusal)
    }

    /// Decodes a child's result pipe through the message's own keys.
    package static func read(_ output: [UInt8]) -> Result<VerdictMessage, ReadFailure> {
        do {
            return .success(try JSONDecoder().decode(VerdictMessage.self, from: Data(output)))
        } catch let refusal as Refusal {
            return .failure(.refused(refusal))
        } catch {
            return .failure(.unreadable(error))
        }
    }
}

extension Rejection {
    /// The rejection a child's verdict says; nil for a reason no decoder may give.
    init?(_ rejected: VerdictMessage.Rejected) {
        guard let reason = Reason(rawValue: rejected.reason), DecoderVerdict.decoderReasons.contains(reason) else { return nil }
        self.init(reason, rejected.detail, entry: rejected.entry, entryIndex: rejected.index.flatMap { Int(exactly: $0) })
        bytesWritten = rejected.bytesWritten ?? 0
        otherEntry = rejected.otherEntry
    }
}
