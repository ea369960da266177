import AirlockConfiguration
import AirlockDecoders
import AirlockEvents
import AirlockSystem

extension DropDecision {
    /// The drop's decoder child, run; whether children can be started is noted
    /// for the log and the metrics (`DecoderStartHealth`). The child's notices go
    /// to `early` (each large file it closed) and to `headStart` (what it wrote).
    func runDecoder(_ format: DropFormat, drop: FileDescriptor, staging: FileDescriptor, display: ProgressDisplay?,
                    early: EarlyDigests, headStart: SyncHeadStart?) throws(SystemError) -> DecoderProcess.Run {
        let run: DecoderProcess.Run
        do {
            run = try decoder(for: format).run(format.decoderRequest(configuration, mode: .decode, progress: display != nil),
                                               drop: drop, staging: staging,
                                               progress: display.map { display in { display.update(done: $0, total: $1) } },
                                               written: { early.written($0) }, writing: { headStart?.written($0) })
        } catch {
            DecoderStartHealth.failed("\(error)", log: log, state: layout.state)
            throw error
        }
        if run.taken != nil {
            DecoderStartHealth.started(log: log, state: layout.state)
        } else if !run.abandoned, let fault = DecoderVerdict.machineryFault(run) {
            DecoderStartHealth.failed(fault, log: log, state: layout.state)
        }
        return run
    }
}
