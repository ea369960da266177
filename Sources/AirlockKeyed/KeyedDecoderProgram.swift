import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation

/// The keyed-archive decoder child: the same descriptors, confinement and result
/// pipe as `airlock-decoder`, with Foundation's NSKeyedUnarchiver inside. It is
/// a separate program so that the archive decoder need not load Foundation.
///
/// Arguments: `keyed --limit-…=N … POLICY_KEY=VALUE … class_name=NAME … max_bytes=N …`.
public enum KeyedDecoderProgram {
    public static func main(_ commandLine: [String]) -> Int32 {
        guard let (start, preloaded) = TemplateServer.start(commandLine, warmUp: KeyedWarmUp.run) else { return ChildStart.unusedStatus }
        let request: DecoderRequest
        do {
            request = try DecoderRequest(decoding: start.arguments)
        } catch {
            DecoderProgram.printError("airlock-keyed-decoder: \(error) (this program is started by airlock, not by hand)")
            if case .version = error { return DecoderRequest.refusedStatus }
            return DecoderProgram.usageStatus
        }
        guard request.format == "keyed", request.mode == .decode || request.mode == .inspect else { return usage() }
        let inspect = request.mode == .inspect
        let database = request.magicDatabase
        var limits = request.limits
        let settings = request.keyed, policy = request.policy
        limits.cpuSeconds += start.cpuSecondsSpent
        _ = setlocale(LC_CTYPE, "C.UTF-8")
        let detector = preloaded?.detector(for: database) ?? ContentTypes.load(database)
        let confinement: ConfinementReport
        do {
            confinement = try Confinement.apply(limits, staging: inspect ? nil : Confinement.stagingDescriptor,
                                                tiedToSupervisor: start.tiedToSupervisor)
        } catch {
            DecoderProgram.printError("airlock-keyed-decoder: cannot confine: \(error)")
            return 70
        }
        guard DecoderProgram.announceTaken(program: "airlock-keyed-decoder") else { return 71 }
        #if DEBUG
        if CurrentProcess.environment("AIRLOCK_TEST_DECODER_FAULT") == "abort" { CurrentProcess.abort() }
        if CurrentProcess.environment("AIRLOCK_TEST_DECODER_FAULT") == "drop-eio" { DropFile.failEveryRead() }
        #endif
        var message: VerdictMessage
        if limits.requiresConfinement && confinement.isRefused {
            message = DecoderProgram.unconfined(confinement)
        } else {
            switch detector {
            case .failure(let error): message = ContentTypes.unavailable(error)
            case .success(let detector): message = run(settings: settings, policy: policy, inspect: inspect, detector: detector)
            }
        }
        return DecoderProgram.report(&message, confinement, program: "airlock-keyed-decoder")
    }

    private static func usage() -> Int32 {
        DecoderProgram.printError("airlock-keyed-decoder: bad arguments (this program is started by airlock, not by hand)")
        return DecoderProgram.usageStatus
    }

    /// - Parameter inspect: decode and render, but write nothing.
    static func run(settings: KeyedSettings, policy: Policy, inspect: Bool, detector: ContentTypeDetector? = nil) -> VerdictMessage {
        let drop = Confinement.dropDescriptor
        let bytes: [UInt8]
        do {
            // One byte over the limit is enough to know it is too large.
            bytes = try DropFile(drop).readAll(limit: Int(settings.maxBytes) + 1)
        } catch where error.errno == .fileTooLarge {
            return rejected(.dropTooLarge, "over the \(settings.maxBytes)-byte limit for keyed archives")
        } catch {
            return DecoderProgram.failure(error, while: .readingDrop)
        }
        let memos: [ArchivedMemoValue]
        let asArray: Bool
        switch KeyedDecoder(settings: settings).decode(Data(bytes)) {
        case .rejected(let reason, let detail):
            return rejected(reason, detail)
        case .memo(let memo):
            memos = [memo]
            asArray = false
        case .memos(let list):
            memos = list
            asArray = true
        }
        let files: [(String, Data)]
        do {
            files = try renderedFiles(memos, asArray: asArray, original: settings.keepOriginal ? bytes : nil)
        } catch {
            return rejected(.invalidField, "the record cannot be rendered as JSON: \(error)")
        }
        // Judged on the rendered bytes before anything is written, by inspect and run alike.
        var quota = RenderQuota(policy: policy)
        for (name, data) in files {
            if let violation = quota.admit(Array(name.utf8), size: Int64(data.count), source: Int64(bytes.count)) {
                return rejected(violation.reason, violation.detail, entry: violation.entry)
            }
        }
        // Renders are typed like extracted files, from the bytes about to be written.
        let types = detector.map { detector in files.map { ($0.0, detector.type(of: [UInt8]($0.1.prefix(ContentTypeDetector.headBytes)))) } }
        let classes = files.compactMap { (name, data) -> ClassifiedEntry? in
            let found = ContentClasses.of(name: Array(name.utf8), bytes: [UInt8](data))
            return found.isEmpty ? nil : ClassifiedEntry(entry: EscapedName(Array(name.utf8)).text, classes: found)
        }
        if inspect {
            do {
                try MemoRendering.verify(files[0].1, memos, asArray: asArray)
            } catch {
                return rejected(.decoderFailed, "the rendered record did not read back: \(error)")
            }
            return accepted(files: files.count, bytes: files.reduce(0) { $0 + Int64($1.1.count) }, memos: memos.count, types: types, classes: classes)
        }
        let written: Int64
        do {
            written = try writeAndVerify(files, memos, asArray: asArray, policy: policy)
        } catch let error as SystemError {
            return DecoderProgram.failure(error)
        } catch {
            return rejected(.decoderFailed, "the rendered record did not read back: \(error)")
        }
        return accepted(files: files.count, bytes: written, memos: memos.count, types: types, classes: classes)
    }

    private static func accepted(files: Int, bytes: Int64, memos: Int, types: [(String, String)]?,
                                 classes: [ClassifiedEntry]) -> VerdictMessage {
        VerdictMessage(.accepted(VerdictMessage.Accepted(files: Int64(files), directories: 0, entries: Int64(memos), bytesWritten: bytes)),
                       types: types?.map { DetectedType(entry: $0.0, type: $0.1) }, classes: classes)
    }

    /// Writes each file into staging with the staging writer; the bytes written.
    private static func write(_ files: [(String, Data)], policy: Policy) throws -> Int64 {
        var writer = StagingWriter(root: Confinement.stagingDescriptor, policy: policy)
        defer { writer.close() }
        var written: Int64 = 0
        for (name, data) in files {
            let path = try EntryPath(validating: Array(name.utf8), policy: policy)
            try writer.beginFile(path, size: Int64(data.count))
            let bytes = [UInt8](data)
            let result = bytes.withUnsafeBytes { buffer in
                Result { () throws(SystemError) in try writer.write(buffer) }
            }
            try result.get()
            try writer.endFile()
            written += Int64(data.count)
        }
        return written
    }

    /// The files a keyed drop lands as: the rendered record, then the original
    /// archive when it is kept.
    private static func renderedFiles(_ memos: [ArchivedMemoValue], asArray: Bool, original: [UInt8]?) throws -> [(String, Data)] {
        var files = [(MemoRendering.fileName(forArray: asArray), try MemoRendering.render(memos, asArray: asArray))]
        if let original { files.append(("original.plist", Data(original))) }
        return files
    }

    /// Writes `files` into staging, then reads the record back and compares it
    /// with what was decoded; the bytes written.
    private static func writeAndVerify(_ files: [(String, Data)], _ memos: [ArchivedMemoValue], asArray: Bool,
                                       policy: Policy) throws -> Int64 {
        let written = try write(files, policy: policy)
        let name = Array(MemoRendering.fileName(forArray: asArray).utf8)
        let back = try readBack(name, limit: files[0].1.count + 1)
        try MemoRendering.verify(Data(back), memos, asArray: asArray)
        return written
    }

    private static func readBack(_ name: [UInt8], limit: Int) throws(SystemError) -> [UInt8] {
        let file = OwnedDescriptor(try Confinement.stagingDescriptor.open(name, [.readOnly, .noFollow]))
        return try file.descriptor.readAll(limit: limit)
    }

    private static func rejected(_ reason: Reason, _ detail: String, entry: [UInt8]? = nil) -> VerdictMessage {
        VerdictMessage(.rejected(VerdictMessage.Rejected(Violation(reason, detail, entry: entry), entries: nil, bytesWritten: 0)))
    }
}
