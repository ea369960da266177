import AirlockPolicy
import AirlockSystem
import Foundation

/// `airlock doctor`: what confinement the kernel grants a decoder child here,
/// found by starting one in probe mode (it confines itself exactly as for a
/// drop, then reports instead of decoding).
public struct Doctor {
    public struct Findings: Sendable {
        public var landlockABI: Int
        public var confinement: DecoderConfinementState
        public var problems: String?
        public var confineMicroseconds: Int
        public var limits: [String: Int64]

        public var landlock: Bool { confinement.landlock == "in-force" }
        public var seccomp: Bool { confinement.seccomp == "in-force" }
    }

    let configuration: Configuration
    let decoderDirectory: String

    public init(configuration: Configuration, decoderDirectory: String) {
        self.configuration = configuration
        self.decoderDirectory = decoderDirectory
    }

    var decoderExecutable: String { decoderDirectory + "/" + DropFormat.archive(.zip).program }

    public func probe() throws(SystemError) -> Findings {
        let nothing = try FileDescriptor.open(path: "/dev/null", [.readOnly])
        defer { nothing.close() }
        let decoder = DecoderProcess(executable: decoderExecutable, timeoutSeconds: 30)
        let run = try decoder.run(arguments: ["--probe"] + configuration.decoderLimits.arguments, drop: nothing, staging: nil)
        guard run.termination == .exited(0), case .success(let message) = run.message,
              case .probe(let probe) = message.outcome, let fields = message.confinement,
              let confinement = DecoderConfinementState(message, required: configuration.decoderConfinementRequired) else {
            throw SystemError("probe", Array(decoderExecutable.utf8), .protocolError)
        }
        return Findings(
            landlockABI: Int(clamping: fields.landlockABI), confinement: confinement,
            problems: fields.problems, confineMicroseconds: Int(clamping: probe.confineMicroseconds),
            limits: ["address_space_bytes": probe.addressSpaceBytes, "cpu_seconds": probe.cpuSeconds,
                     "open_files": probe.openFiles, "file_size_bytes": probe.fileSizeBytes])
    }
}

extension Doctor {
    /// One line per mechanism for `doctor` and `status`: in force, not offered by
    /// the kernel, or refused (and then what decoding does about it).
    public static func describe(_ state: String, _ inForce: String, required: Bool) -> String {
        switch state {
        case "in-force": return "in force: " + inForce
        case "not-offered": return "not offered by this kernel (decoders run without it)"
        default: return "REFUSED although the kernel offers it: " + (required ? "no decoder runs, drops wait deferred" : "decoders run without it (best-effort)")
        }
    }
}
