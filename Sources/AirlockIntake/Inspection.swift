import AirlockConfiguration
import AirlockDecoders
import AirlockEvents
import AirlockPolicy
import AirlockSystem

/// `airlock inspect FILE`: the verdict `run` would reach for a file, reached the
/// same way (a confined decoder child), writing nothing anywhere.
public struct Inspection {
    public enum Verdict: Sendable {
        case accepted(format: String, files: Int64, bytes: Int64)
        case rejected(Rejection)
    }

    let configuration: Configuration
    let decoderDirectory: String
    /// Show progress of a large file on standard error (standard output is a terminal).
    public var showsProgress = false

    public init(configuration: Configuration, decoderDirectory: String) {
        self.configuration = configuration
        self.decoderDirectory = decoderDirectory
    }

    public func inspect(path: String) throws(SystemError) -> Verdict {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path: path, [.readOnly, .noFollow, .nonBlocking])
        } catch where error.errno == .tooManyLinks {
            return .rejected(Rejection(.notRegularFile, "the file is a symbolic link"))
        } catch where UnreadableDrop.applies(to: error) {
            // The verdict run would reach: the file's own mode forbids reading it.
            return .rejected(Rejection(.unreadableDrop, "the file cannot be opened (\(error.errno))"))
        }
        return try fd.closeAfter { (drop) throws(SystemError) in
            let status = try drop.status()
            guard status.kind == .regular else {
                return .rejected(Rejection(.notRegularFile, "the file is a \(status.kind), not a regular file"))
            }
            let format: DropFormat
            switch try DropDecision.identify(drop, size: status.size, configuration: configuration) {
            case .failure(let rejection): return .rejected(rejection)
            case .success(let found): format = found
            }
            let decoder = DecoderProcess(for: format, in: decoderDirectory, timeoutSeconds: configuration.decoderTimeoutSeconds)
            let display = showsProgress ? ProgressDisplay(name: Array(path.utf8)) : nil
            defer { display?.finish() }
            let run = try decoder.run(format.decoderRequest(configuration, mode: .inspect, progress: display != nil),
                                      drop: drop, staging: nil, progress: display.map { display in { display.update(done: $0, total: $1) } })
            switch DecoderVerdict.interpret(run, timeoutSeconds: configuration.decoderTimeoutSeconds) {
            case .accepted(let files, let bytes):
                // The content rules too; virus scanning needs staging, which inspect never writes.
                if var rejection = configuration.contentRejection(files: files, types: DetectedTypes.from(run.message),
                                                                 classes: DetectedClasses.from(run.message)) {
                    rejection.format = format.name
                    return .rejected(rejection)
                }
                return .accepted(format: format.name, files: files, bytes: bytes)
            case .rejected(var rejection):
                rejection.format = format.name
                return .rejected(rejection)
            case .deferred(let detail): throw SystemError("inspect", text: detail, .ioError)
            }
        }
    }
}
