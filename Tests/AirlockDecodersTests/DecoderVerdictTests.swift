import AirlockChild
@testable import AirlockDecoders
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Glibc
import Testing

@Suite("The child's verdict for a failed system call, as the supervisor reads it")
struct DecoderVerdictTests {
    private func interpret(_ error: SystemError, while stage: SystemFailureStage) -> DecoderVerdict {
        let json = DecoderProgram.failure(error, while: stage)
        // A child that said it took its drop: only such a child's verdict is believed.
        let run = DecoderProcess.Run(termination: .exited(0), output: Array(json.jsonText.utf8), timedOut: false,
                                     taken: VerdictMessage.currentVersion)
        return DecoderVerdict.interpret(run, timeoutSeconds: 10)
    }

    @Test("an environmental errno while reading the drop defers it, named as a read of the drop",
          arguments: [EIO, ENOSPC, EACCES, ENFILE])
    func readingDropDefers(_ code: Int32) {
        let verdict = interpret(SystemError("pread", nil, Errno(rawValue: code)), while: .readingDrop)
        guard case .deferred(let detail) = verdict else {
            Issue.record("expected a deferral, got \(verdict)")
            return
        }
        expect(detail.hasPrefix("reading the drop failed"))
    }

    @Test("any other errno while reading the drop is the decoder's failure, not a verdict on the bytes")
    func readingDropOtherwise() {
        let verdict = interpret(SystemError("pread", nil, Errno(rawValue: EINVAL)), while: .readingDrop)
        guard case .rejected(let rejection) = verdict else {
            Issue.record("expected decoder-failed, got \(verdict)")
            return
        }
        expectEqual(rejection.reason, .decoderFailed)
    }

    @Test("a full disk while writing staging still defers, named as a write")
    func writingStagingDefers() {
        let verdict = interpret(SystemError("write", Array("a".utf8), .noSpace), while: .writingStaging)
        expectEqual(verdict, .deferred("writing to staging failed: write \"a\": \(Errno.noSpace)"))
    }
}
