import AirlockChild
import AirlockFormats
import AirlockPolicy
import AirlockSystem
import AirlockText

/// airlock-decoder, the archive decoder program: its child's whole life. Parse
/// its arguments, confine itself, decode the inherited drop into the inherited
/// staging directory, and write one JSON verdict to the inherited result pipe.
///
/// Arguments: `FORMAT [--inspect] --limit-...=N ... POLICY_KEY=VALUE ...`, or
/// `--probe --limit-...=N ...` to confine itself and report what it was granted.
/// Descriptors: 3 the drop (read-only), 4 the staging directory (absent with
/// `--inspect` and `--probe`), 5 the result pipe. Started as a template
/// (`--template`), it forks a child per drop that receives both then.
public enum ArchiveDecoderProgram {
    public static func main(_ commandLine: [String]) -> Int32 {
        guard let (start, preloaded) = TemplateServer.start(commandLine, warmUp: DecoderWarmUp.run) else {
            return ChildStart.unusedStatus
        }
        var request: Request
        switch Request.read(start.arguments) {
        case .success(let read): request = read
        case .failure(let refused): return refused.status
        }
        request.limits.cpuSeconds += start.cpuSecondsSpent
        // Locale data and the magic database are read now, while files may still be
        // opened (a template's child has both from its template).
        CurrentProcess.setCharacterLocale("C.UTF-8")
        request.detector = preloaded?.detector(for: request.magicDatabase) ?? ContentTypes.load(request.magicDatabase)
        // A detector per typing thread, loaded now too (from the file, libmagic opens it).
        if case .success(let detector?) = request.detector, request.writesStaging || request.inspect {
            request.typingDetectors = (0..<TypingThreads.wanted).compactMap { _ in try? detector.sibling() }
        }
        // Each converter loads its gconv module now; confinement forbids it later.
        if !request.probe {
            switch LegacyNames.open(zip: request.zipLegacyEncoding, tar: request.tarLegacyEncoding) {
            case .success(let names): request.legacyNames = names
            case .failure(let error):
                DecoderProgram.printError("airlock-decoder: cannot decode legacy names: \(error)")
                return 70
            }
        }
        #if DEBUG
        if !request.probe { TestFaults.beforeConfinement() }
        #endif
        let confining = monotonicNanoseconds()
        let confinement: ConfinementReport
        do {
            confinement = try Confinement.apply(request.limits, staging: request.writesStaging ? Confinement.stagingDescriptor : nil)
        } catch {
            DecoderProgram.printError("airlock-decoder: cannot confine: \(error)")
            return 70
        }
        let confineMicroseconds = Int64((monotonicNanoseconds() - confining) / 1000)
        if !request.probe && !DecoderProgram.announceTaken(program: "airlock-decoder") { return 71 }
        #if DEBUG
        // Faults are for drops: the start-up probe of `airlock run` must not hang on one.
        if !request.probe { TestFaults.inject(request) }
        #endif
        var message: VerdictMessage
        if request.probe {
            let limits = request.limits
            message = VerdictMessage(.probe(VerdictMessage.Probe(
                confineMicroseconds: confineMicroseconds, addressSpaceBytes: limits.addressSpaceBytes, cpuSeconds: limits.cpuSeconds,
                openFiles: limits.openFiles, fileSizeBytes: limits.fileSizeBytes,
                confinement: limits.requiresConfinement ? "required" : "best-effort")))
        } else if request.limits.requiresConfinement && confinement.isRefused {
            message = DecoderProgram.unconfined(confinement)
        } else {
            message = decode(request)
        }
        return DecoderProgram.report(&message, confinement, program: "airlock-decoder")
    }

    static func decode(_ request: Request) -> VerdictMessage {
        let detector: ContentTypeDetector?
        switch request.detector {
        case .failure(let error): return ContentTypes.unavailable(error)
        case .success(let loaded): detector = loaded
        }
        let drop = Confinement.dropDescriptor
        let size: Int64
        do {
            size = try drop.status().size
        } catch {
            return DecoderProgram.failure(error, while: .readingDrop)
        }
        var scan = ArchiveScan(format: request.format, policy: request.policy, drop: drop, dropSize: size,
                               legacyNames: request.legacyNames!)
        if request.list { return ArchiveListing.run(scan) }
        scan.reportsProgress = request.progress
        let outcome: ScanOutcome
        var types: [(String, String)]?
        var classes: [ClassifiedEntry]
        let threads = TypingThreads(request.typingDetectors)
        if request.inspect {
            (outcome, types, classes) = ContentTypes.scan(&scan, into: DiscardingSink(), detector: detector, threads: threads)
        } else {
            var writer = StagingWriter(root: Confinement.stagingDescriptor, policy: request.policy)
            writer.notices = Confinement.resultDescriptor
            if size >= pipelineMinimumDropBytes {
                (outcome, types, classes) = scanIntoStaging(&scan, writer: writer, detector: detector, threads: threads)
            } else {
                (outcome, types, classes) = ContentTypes.scan(&scan, into: writer, detector: detector, threads: threads)
            }
        }
        if let error = outcome.systemError { return DecoderProgram.failure(error, while: outcome.failedWhile) }
        let detected = types?.map { DetectedType(entry: $0.0, type: $0.1) }
        guard let violation = outcome.findings.worst else {
            return VerdictMessage(.accepted(VerdictMessage.Accepted(files: outcome.files, directories: outcome.directories,
                                                                    entries: Int64(outcome.entries), bytesWritten: outcome.bytesWritten)),
                                  types: detected, classes: classes)
        }
        return VerdictMessage(.rejected(VerdictMessage.Rejected(violation, entries: Int64(outcome.entries), bytesWritten: outcome.bytesWritten)),
                              types: detected)
    }

    /// Drops smaller than this are written on the scan's thread: a few small files
    /// (a flood of small drops) leave nothing for a second thread to overlap.
    static let pipelineMinimumDropBytes: Int64 = 256 << 10

    /// Runs `scan` into staging through `writer`, on a writing thread of its own
    /// when one starts (`PipelinedSink`), on this thread otherwise. The writing
    /// thread's failure, if any, is the outcome's system error whatever the scan
    /// recorded after handing over the failed operation: the serial writer would
    /// have stopped the scan there.
    ///
    /// Files declaring `writerClassifiesFrom` bytes or more get their content
    /// classes on the writing thread, the rest on the scan's: a large file's
    /// decompression keeps the scan's thread busy while the writing thread waits,
    /// and many small files are the other way round (the kernel's file creation).
    static func scanIntoStaging(_ scan: inout ArchiveScan, writer: StagingWriter, detector: ContentTypeDetector?,
                                threads: TypingThreads?) -> (ScanOutcome, [(String, String)]?, [ClassifiedEntry]) {
        guard let pipelined = PipelinedSink(ClassifyingSink(writer, share: .atLeast(writerClassifiesFrom))) else {
            return ContentTypes.scan(&scan, into: writer, detector: detector, threads: threads)
        }
        var (outcome, types, closed) = ContentTypes.typedScan(&scan, into: ClassifyingSink(pipelined, share: .smallerThan(writerClassifiesFrom)),
                                                              detector: detector, threads: threads)
        // The scan closed its sink before returning: the thread is done.
        if let failure = closed.inner.failure {
            outcome.systemError = failure
            outcome.failedWhile = .writingStaging
        }
        return (outcome, types, ClassifyingSink<StagingWriter>.merged(closed.numbered, closed.inner.inner.numbered))
    }

    /// Files this large are classified on the writing thread.
    static let writerClassifiesFrom: Int64 = 1 << 20

    struct Request {
        var format: ArchiveFormat = .zip
        var inspect = false
        var probe = false
        var progress = false
        var limits = DecoderLimits(addressSpaceBytes: 0, cpuSeconds: 0, openFiles: 0, fileSizeBytes: 0)
        var policy = Policy()
        /// Where libmagic's database is; nil: no type detection.
        var magicDatabase: String?
        /// Loaded from `magicDatabase` before confinement.
        var detector: Result<ContentTypeDetector?, ContentTypeError> = .success(nil)
        /// More of the same, one for each thread that types files while the scan extracts.
        var typingDetectors: [ContentTypeDetector] = []
        /// The legacy name encodings, and their converters, opened before confinement.
        var zipLegacyEncoding = LegacyNames.zipDefault
        var tarLegacyEncoding: String?
        var legacyNames: LegacyNames?

        /// Lists the archive's entries from their headers instead of judging it.
        var list = false
        var writesStaging: Bool { !inspect && !probe && !list }

        /// The exit status of a child that refuses its request before taking the drop.
        struct Refused: Error {
            let status: Int32
        }

        /// The request the child was given; refused with 76 for another version, 64 for anything else.
        static func read(_ strings: [String]) -> Result<Request, Refused> {
            let asked: DecoderRequest
            do {
                asked = try DecoderRequest(decoding: strings)
            } catch {
                DecoderProgram.printError("airlock-decoder: \(error) (this program is started by airlock, not by hand)")
                if case .version = error { return .failure(Refused(status: DecoderRequest.refusedStatus)) }
                return .failure(Refused(status: DecoderProgram.usageStatus))
            }
            guard let request = Request(asked) else {
                DecoderProgram.printError("airlock-decoder: the request names no archive format this decoder reads")
                return .failure(Refused(status: DecoderProgram.usageStatus))
            }
            return .success(request)
        }

        init?(_ message: DecoderRequest) {
            switch message.mode {
            case .probe: probe = true
            case .inspect: inspect = true
            case .list: inspect = true; list = true
            case .decode: break
            }
            if !probe {
                guard let format = ArchiveFormat(rawValue: message.format) else { return nil }
                self.format = format
            }
            progress = message.progress
            magicDatabase = message.magicDatabase
            limits = message.limits
            policy = message.policy
            zipLegacyEncoding = message.zipLegacyEncoding
            tarLegacyEncoding = message.tarLegacyEncoding
        }
    }
}
