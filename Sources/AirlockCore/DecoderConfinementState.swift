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

    /// Reads a child's verdict or probe JSON; nil when it does not say.
    init?(_ object: [String: Any], required: Bool) {
        guard let landlock = object["landlock_state"] as? String, let seccomp = object["seccomp_state"] as? String else { return nil }
        self.init(landlock: landlock, seccomp: seccomp, landlockABI: (object["landlock_abi"] as? NSNumber)?.intValue ?? 0,
                  problems: (object["confinement_problems"] as? String) ?? "", required: required)
    }

    private static let latest = Mutex<DecoderConfinementState?>(nil)
    private static let withheld = Atomic<Int64>(0)

    /// The last state seen in this process.
    public static var current: DecoderConfinementState? { latest.withLock { $0 } }
    /// Drops deferred in this process because decoders could not be confined.
    public static var withheldDrops: Int64 { withheld.load(ordering: .relaxed) }

    /// Records what a decoder child reported; says so in the log and in
    /// `state/decoder-confinement` when it differs from what was known.
    static func observe(_ run: DecoderProcess.Run, required: Bool, log: Log, state: FileDescriptor) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(run.output))) as? [String: Any],
              let seen = DecoderConfinementState(object, required: required) else { return }
        if object["verdict"] as? String == "unconfined" { withheld.add(1, ordering: .relaxed) }
        record(seen, log: log, state: state)
    }

    /// Makes `seen` the current state; logs and persists a change.
    public static func record(_ seen: DecoderConfinementState, log: Log, state: FileDescriptor) {
        let previous = latest.withLock { current in
            defer { current = seen }
            return current
        }
        guard previous != seen else { return }
        if seen.withholdsDecoding {
            log.error("no decoder runs, drops wait deferred: \(seen.summary); 'airlock doctor' explains, decoder.confinement \"best-effort\" opts out")
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

    static let fileName = "decoder-confinement"

    private static func persist(_ seen: DecoderConfinementState, state: FileDescriptor) throws(SystemError) {
        var json = JSONObjectWriter()
        json.add("landlock_state", seen.landlock)
        json.add("seccomp_state", seen.seccomp)
        json.add("landlock_abi", Int64(seen.landlockABI))
        if !seen.problems.isEmpty { json.add("confinement_problems", seen.problems) }
        json.add("required", seen.required ? 1 : 0)
        // Not the directory's fsync: a power cut that loses the new name leaves the
        // previous state, which the next decoder's report corrects.
        try state.replaceAtomically(Array(fileName.utf8), with: Array((json.text + "\n").utf8),
                                    temporary: Array("\(fileName).tmp".utf8), AtomicWriteOptions(mode: 0o600, syncsDirectory: false))
    }

    /// What the supervisor of this root last recorded; nil when nothing was.
    public static func recorded(in state: FileDescriptor) -> DecoderConfinementState? {
        guard let fd = try? state.open(Array(fileName.utf8), [.readOnly, .noFollow]) else { return nil }
        defer { fd.close() }
        guard let bytes = try? fd.readAll(limit: 64 * 1024),
              let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else { return nil }
        return DecoderConfinementState(object, required: (object["required"] as? NSNumber)?.boolValue ?? true)
    }
}
