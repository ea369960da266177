import AirlockChild
import AirlockPolicy
import AirlockSystem
import Foundation

/// What the supervisor makes of a decoder child's run. The child's JSON is
/// believed only as far as it is well-formed and names a reason the decoder may
/// give; an accepted verdict is audited against staging before any commit.
enum DecoderVerdict: Equatable {
    case accepted(files: Int64, bytes: Int64)
    case rejected(Rejection)
    case deferred(String)

    /// Reasons a decoder may report; anything else is a misbehaving child.
    static let decoderReasons: Set<Reason> = [
        .unsafePath, .unsupportedEntryType, .duplicatePath, .pathConflict, .nameCollision, .nameTooLong, .tooDeep,
        .tooManyEntries, .fileTooLarge, .totalTooLarge, .ratioTooHigh, .corruptArchive, .encryptedEntry, .unsupportedFormat,
        .wrongRootClass, .unknownClass, .unsupportedSchema, .invalidField, .dropTooLarge, .decoderFailed,
    ]

    static func interpret(_ run: DecoderProcess.Run, timeoutSeconds: Int64) -> DecoderVerdict {
        if run.abandoned {
            return .deferred("abandoned: airlock stopped before the decoder finished; the drop stays claimed")
        }
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
        guard let object = (try? JSONSerialization.jsonObject(with: Data(run.output))) as? [String: Any],
              let verdict = object["verdict"] as? String else {
            return .rejected(Rejection(.decoderFailed, "the decoder exited without a readable verdict"))
        }
        let bytesWritten = (object["bytes_written"] as? NSNumber)?.int64Value ?? 0
        switch verdict {
        case "accepted":
            guard let files = (object["files"] as? NSNumber)?.int64Value else {
                return .rejected(Rejection(.decoderFailed, "the decoder's verdict lacks a file count"))
            }
            return .accepted(files: files, bytes: bytesWritten)
        case "rejected":
            guard let code = object["reason"] as? String, let reason = Reason(rawValue: code), decoderReasons.contains(reason) else {
                return .rejected(Rejection(.decoderFailed, "the decoder gave an unknown reason"))
            }
            var rejection = Rejection(reason, (object["detail"] as? String) ?? "",
                                      entry: object["entry"] as? String, entryIndex: (object["index"] as? NSNumber)?.intValue)
            rejection.bytesWritten = bytesWritten
            rejection.otherEntry = object["other_entry"] as? String
            return .rejected(rejection)
        case "unconfined":
            // Not the drop's fault: it waits until the decoders can be confined again.
            return .deferred("no decoder runs unconfined: \((object["detail"] as? String) ?? "confinement refused"); "
                + "'airlock doctor' says what is missing (decoder.confinement \"best-effort\" opts out)")
        case "error":
            let errno = Errno(rawValue: Int32((object["errno"] as? NSNumber)?.intValue ?? 0))
            let detail = (object["detail"] as? String) ?? "\(errno)"
            // A drop the disk cannot read is not judged on its bytes: it waits, claimed.
            if object["stage"] as? String == SystemFailureStage.readingDrop.rawValue {
                if errno.isEnvironmental { return .deferred("reading the drop failed: \(detail)") }
                return .rejected(Rejection(.decoderFailed, "the decoder could not read the drop: \(detail)"))
            }
            if errno.isEnvironmental { return .deferred("writing to staging failed: \(detail)") }
            if errno == .exists {
                return .rejected(Rejection(.nameCollision, "the filesystem treats two entry names as one: \(detail)"))
            }
            return .rejected(Rejection(.decoderFailed, "the decoder failed: \(detail)"))
        case "unavailable":
            // The child could not load what it needs to judge (the magic database): not the drop's fault.
            return .deferred((object["detail"] as? String) ?? "the decoder could not start its work")
        default:
            return .rejected(Rejection(.decoderFailed, "the decoder gave an unknown verdict"))
        }
    }
}
