import AirlockFormats
import AirlockPolicy
import AirlockSystem

extension Intake {
    /// The drop's decoder child, run; whether children can be started is noted
    /// for the log and the metrics (`DecoderStartHealth`).
    func runDecoder(_ format: DropFormat, drop: FileDescriptor, staging: FileDescriptor, display: ProgressDisplay?,
                            early: EarlyDigests) throws(SystemError) -> DecoderProcess.Run {
        let run: DecoderProcess.Run
        do {
            run = try decoder(for: format).run(format.decoderRequest(configuration, mode: .decode, progress: display != nil),
                                               drop: drop, staging: staging,
                                               progress: display.map { display in { display.update(done: $0, total: $1) } },
                                               written: { early.written($0) })
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

extension Intake {
    /// The checks made before any decoder runs: the drop's size, then its format
    /// from its first bytes.
    static func identify(_ drop: FileDescriptor, size: Int64, configuration: Configuration) throws(SystemError) -> Result<DropFormat, Rejection> {
        if let tooLarge = DropSize.rejection(size, configuration.policy) { return .failure(tooLarge) }
        var prefix = [UInt8](repeating: 0, count: ArchiveFormat.sniffLength)
        let got = try prefix.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try drop.read(into: raw, at: 0) }
        }.get()
        var sniffed = DropFormat.sniff(Array(prefix[0..<got]))
        if sniffed == nil && got > 0 { sniffed = try DropFormat.zipBehindPrefix(drop, size: size) }
        if sniffed == nil && got > 0 { sniffed = try DropFormat.isoImage(drop, size: size) }
        guard let format = sniffed else {
            return .failure(Rejection(.unsupportedFormat, got == 0 ? "the drop is empty" : "not a ZIP, tar, compressed tar, 7z or keyed archive"))
        }
        if let refusal = configuration.formats.refusal(format) { return .failure(refusal) }
        if format == .keyed && size > configuration.keyed.maxBytes {
            var rejection = Rejection(.dropTooLarge, "the keyed archive is \(size) bytes, over the \(configuration.keyed.maxBytes)-byte limit")
            rejection.format = format.name
            return .failure(rejection)
        }
        return .success(format)
    }
}
