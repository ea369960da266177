import AirlockConfiguration
import AirlockEvents
import AirlockPolicy
import AirlockSystem
import Foundation
import Synchronization

/// What the supervisor last learned of its decoders' confinement, from the start-up
/// probe and from every decoder child's own report: for the log (once per change),
/// the metrics, and `airlock status` (through `state/decoder-confinement`).
public struct DecoderConfinementState: Sendable, Equatable {
    /// "in-force", "not-offered" or "refused".
    public var landlock: String
    public var seccomp: String
    public var landlockABI: Int
    /// Why something is missing; empty when both are in force.
    public var problems: String
    /// Whether a refusal stops decoding (`decoder.confinement: "required"`).
    public var required: Bool

    public var isComplete: Bool { landlock == "in-force" && seccomp == "in-force" }
    /// Decoders do not run: something the kernel offers was refused and confinement is required.
    public var withholdsDecoding: Bool { required && (landlock == "refused" || seccomp == "refused") }

    public var summary: String {
        "Landlock \(landlock == "in-force" ? "ABI \(landlockABI)" : landlock), seccomp \(seccomp)"
            + (problems.isEmpty ? "" : " (\(problems))")
    }

    public init(landlock: String, seccomp: String, landlockABI: Int, problems: String, required: Bool) {
        self.landlock = landlock
        self.seccomp = seccomp
        self.landlockABI = landlockABI
        self.problems = problems
        self.required = required
    }

    /// What a child's verdict or probe says of its confinement; nil when it does not say.
    package init?(_ message: VerdictMessage, required: Bool) {
        guard let fields = message.confinement else { return nil }
        self.init(landlock: fields.landlockState, seccomp: fields.seccompState, landlockABI: Int(clamping: fields.landlockABI),
                  problems: fields.problems ?? "", required: required)
    }

    private static let latest = Mutex<DecoderConfinementState?>(nil)
    private static let withheld = Atomic<Int64>(0)

    /// The last state seen in this process.
    public static var current: DecoderConfinementState? { latest.withLock { $0 } }
    /// Drops deferred in this process because decoders could not be confined.
    public static var withheldDrops: Int64 { withheld.load(ordering: .relaxed) }

    /// Records what a decoder child reported; says so in the log and in
    /// `state/decoder-confinement` when it differs from what was known.
    package static func observe(_ run: DecoderProcess.Run, required: Bool, log: Log, state: FileDescriptor) {
        guard case .success(let message) = run.message,
              let seen = DecoderConfinementState(message, required: required) else { return }
        if case .unconfined = message.outcome { withheld.add(1, ordering: .relaxed) }
        record(seen, log: log, state: state)
    }

    /// Makes `seen` the current state; logs and persists a change.
    ///
    /// The comparison, the log line and the file's replacement are one step under
    /// the lock, so two threads recording at once (the start-up probe's and a
    /// worker's) leave the file holding the state `current` says, and never
    /// share a temporary file.
    /// - Parameter unlessObserved: record only if nothing was recorded yet in this
    ///   process (the start-up probe, whose answer may arrive after a decoder
    ///   child's own report, which is newer).
    public static func record(_ seen: DecoderConfinementState, log: Log, state: FileDescriptor, unlessObserved: Bool = false) {
        latest.withLock { current in
            guard !(unlessObserved && current != nil) else { return }
            let previous = current
            current = seen
            guard previous != seen else { return }
            if seen.withholdsDecoding {
                log.error("no decoder runs, drops wait deferred: \(seen.summary); 'airlock doctor' explains, \(SettingDefinition.decoderConfinement.name) \"best-effort\" opts out")
            } else if !seen.isComplete {
                log.warning("decoders run with partial confinement: \(seen.summary)")
            } else if previous != nil {
                log.info("decoders are fully confined again: \(seen.summary)")
            }
            do {
                try persist(seen, state: state)
            } catch {
                log.warning("cannot record the decoders' confinement in state/\(fileName): \(error)")
            }
        }
    }

    static let fileName = "decoder-confinement"

    /// The fields of `state/decoder-confinement`, named once for its writer and its reader.
    private enum Key: String, CodingKey {
        case landlockState = "landlock_state", seccompState = "seccomp_state", landlockABI = "landlock_abi"
        case problems = "confinement_problems", required
    }

    /// The recorded state as its file holds it.
    private struct Record: Decodable {
        var state: DecoderConfinementState

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Key.self)
            state = DecoderConfinementState(
                landlock: try fields.decode(String.self, forKey: .landlockState), seccomp: try fields.decode(String.self, forKey: .seccompState),
                landlockABI: try fields.decodeIfPresent(Int.self, forKey: .landlockABI) ?? 0,
                problems: try fields.decodeIfPresent(String.self, forKey: .problems) ?? "",
                required: (try fields.decodeIfPresent(Int64.self, forKey: .required)).map { $0 != 0 } ?? true)
        }
    }

    /// This process's own temporary file: the instances of a fleet share `state/`,
    /// and each removes its temporary file before creating it (a copy a stop left).
    static var temporaryName: [UInt8] { Array("\(fileName).\(CurrentProcess.id).tmp".utf8) }

    private static func persist(_ seen: DecoderConfinementState, state: FileDescriptor) throws(SystemError) {
        var json = JSONObjectWriter()
        json.add(Key.landlockState.rawValue, seen.landlock)
        json.add(Key.seccompState.rawValue, seen.seccomp)
        json.add(Key.landlockABI.rawValue, Int64(seen.landlockABI))
        if !seen.problems.isEmpty { json.add(Key.problems.rawValue, seen.problems) }
        json.add(Key.required.rawValue, Int64(seen.required ? 1 : 0))
        // No fsync, of the file or the directory: every start records the state
        // its probe found, beside the first drops, where a journal commit's wait
        // would hold up a worker. A power cut may leave the previous state,
        // or a torn file that `recorded` reads as none; the next start's probe and
        // every decoder's report correct either.
        try state.replaceAtomically(Array(fileName.utf8), with: Array((json.text + "\n").utf8),
                                    temporary: temporaryName,
                                    AtomicWriteOptions(mode: 0o600, syncsDirectory: false, syncsFile: false))
    }

    /// What the supervisor of this root last recorded; nil when nothing was.
    public static func recorded(in state: FileDescriptor) -> DecoderConfinementState? {
        guard let fd = try? OwnedDescriptor(state.open(Array(fileName.utf8), [.readOnly, .noFollow])) else { return nil }
        guard let bytes = try? fd.descriptor.readAll(limit: 64 * 1024) else { return nil }
        return (try? JSONDecoder().decode(Record.self, from: Data(bytes)))?.state
    }
}
