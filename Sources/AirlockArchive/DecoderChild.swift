import AirlockChild
import AirlockFormats
import AirlockPolicy
import AirlockSystem
import AirlockText

/// The decoder child's whole life: parse its arguments, confine itself, decode
/// the inherited drop into the inherited staging directory, and write one JSON
/// verdict to the inherited result pipe.
///
/// Arguments: `FORMAT [--inspect] --limit-...=N ... POLICY_KEY=VALUE ...`, or
/// `--probe --limit-...=N ...` to confine itself and report what it was granted.
/// Descriptors: 3 the drop (read-only), 4 the staging directory (absent with
/// `--inspect` and `--probe`), 5 the result pipe. Started ahead of need, with
/// `--await-hand-over` alone, it receives both later (`WarmStart`).
extension DecoderChild {
    public static func main(_ commandLine: [String]) -> Int32 {
        #if DEBUG
        let started = DecoderTemplate.start(commandLine, beforeWaiting: TestFaults.spinWhileWaiting, warmUp: DecoderWarmUp.run)
        #else
        let started = DecoderTemplate.start(commandLine, warmUp: DecoderWarmUp.run)
        #endif
        guard let (start, preloaded) = started else { return WarmStart.unusedStatus }
        guard var request = Request(start.arguments) else {
            printError("airlock-decoder: bad arguments (this program is started by airlock, not by hand)")
            return usageStatus
        }
        request.limits.cpuSeconds += start.cpuSecondsSpent
        // Locale data and the magic database are read now, while files may still be
        // opened (a template's child has both from its template).
        CurrentProcess.setCharacterLocale("C.UTF-8")
        request.detector = preloaded?.detector(for: request.magicDatabase) ?? ContentTypes.load(request.magicDatabase)
        // Each converter loads its gconv module now; confinement forbids it later.
        if !request.probe {
            switch LegacyNames.open(taking: &request.encodingArguments) {
            case .success(let names): request.legacyNames = names
            case .failure(let error):
                printError("airlock-decoder: cannot decode legacy names: \(error)")
                return 70
            }
        }
        let confining = monotonicNanoseconds()
        let confinement: ConfinementReport
        do {
            confinement = try Confinement.apply(request.limits, staging: request.writesStaging ? Confinement.stagingDescriptor : nil)
        } catch {
            printError("airlock-decoder: cannot confine: \(error)")
            return 70
        }
        let confineMicroseconds = Int64((monotonicNanoseconds() - confining) / 1000)
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
            message = unconfined(confinement)
        } else {
            message = decode(request)
        }
        return report(&message, confinement, program: "airlock-decoder")
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
            return failure(error, while: .readingDrop)
        }
        var scan = ArchiveScan(format: request.format, policy: request.policy, drop: drop, dropSize: size,
                               legacyNames: request.legacyNames!)
        if request.list { return ArchiveListing.run(scan) }
        scan.reportsProgress = request.progress
        let outcome: ScanOutcome
        var types: [(String, String)]?
        var classes: [ClassifiedEntry]
        if request.inspect {
            (outcome, types, classes) = ContentTypes.scan(&scan, into: DiscardingSink(), detector: detector)
        } else {
            var writer = StagingWriter(root: Confinement.stagingDescriptor, policy: request.policy)
            writer.announcesLargeFiles = true
            (outcome, types, classes) = ContentTypes.scan(&scan, into: writer, detector: detector)
        }
        if let error = outcome.systemError { return failure(error, while: outcome.failedWhile) }
        let detected = types?.map { DetectedType(entry: $0.0, type: $0.1) }
        guard let violation = outcome.findings.worst else {
            return VerdictMessage(.accepted(VerdictMessage.Accepted(files: outcome.files, directories: outcome.directories,
                                                                    entries: Int64(outcome.entries), bytesWritten: outcome.bytesWritten)),
                                  types: detected, classes: classes)
        }
        return VerdictMessage(.rejected(VerdictMessage.Rejected(
            reason: violation.reason.rawValue, detail: violation.detail, entry: violation.entry.map { EscapedName($0).text },
            otherEntry: violation.other.map { EscapedName($0).text }, index: violation.index.map(Int64.init),
            entries: Int64(outcome.entries), bytesWritten: outcome.bytesWritten)), types: detected)
    }

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
        /// The arguments naming legacy name encodings, and their converters, opened before confinement.
        var encodingArguments: [String] = []
        var legacyNames: LegacyNames?

        /// Lists the archive's entries from their headers instead of judging it.
        var list = false
        var writesStaging: Bool { !inspect && !probe && !list }

        init?(_ arguments: [String]) {
            guard let first = arguments.first else { return nil }
            if first == "--probe" {
                probe = true
            } else {
                guard let format = ArchiveFormat(rawValue: first) else { return nil }
                self.format = format
            }
            var rest = Array(arguments.dropFirst())
            if let index = rest.firstIndex(of: "--inspect") {
                inspect = true
                rest.remove(at: index)
            }
            if let index = rest.firstIndex(of: "--list") {
                list = true
                rest.remove(at: index)
            }
            if let index = rest.firstIndex(of: "--progress") {
                progress = true
                rest.remove(at: index)
            }
            magicDatabase = ContentTypes.takeDatabaseArgument(&rest)
            encodingArguments = rest.filter { $0.hasPrefix(LegacyNames.zipArgument) || $0.hasPrefix(LegacyNames.tarArgument) }
            rest.removeAll { $0.hasPrefix(LegacyNames.zipArgument) || $0.hasPrefix(LegacyNames.tarArgument) }
            guard let limits = DecoderLimits(taking: &rest) else { return nil }
            self.limits = limits
            let policyArguments = rest
            guard let policy = Policy(arguments: policyArguments) else { return nil }
            self.policy = policy
        }
    }
}
