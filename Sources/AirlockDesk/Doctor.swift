import AirlockConfiguration
import AirlockDecoders
import AirlockPolicy
import AirlockSystem
import Foundation

/// `airlock doctor`: what confinement the kernel grants a decoder child here,
/// found by starting one in probe mode (it confines itself exactly as for a
/// drop, then reports instead of decoding).
public struct Doctor: Sendable {
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
        try startProbe().finish()
    }

    /// A probe child started and not yet waited for.
    public struct PendingProbe: Sendable {
        fileprivate let doctor: Doctor
        fileprivate let pending: DecoderProcess.Pending

        /// Waits for the probe child and reads what it found.
        public func finish() throws(SystemError) -> Findings {
            try doctor.findings(pending.finish())
        }
    }

    /// Starts the probe child without waiting for it, so that what comes next
    /// overlaps its start. The child is confined where it starts: a probe started
    /// before the supervisor applies its own ruleset reports what a decoder is
    /// granted beside, not beneath, that ruleset.
    public func startProbe() throws(SystemError) -> PendingProbe {
        // The child has its own copy once started: ours closes when this returns.
        let nothing = OwnedDescriptor(try FileDescriptor.open(path: "/dev/null", [.readOnly]))
        let decoder = DecoderProcess(executable: decoderExecutable, timeoutSeconds: 30)
        let request = configuration.decoderRequest(mode: .probe, format: "none")
        return PendingProbe(doctor: self, pending: try decoder.start(request, drop: nothing.descriptor))
    }

    private func findings(_ run: DecoderProcess.Run) throws(SystemError) -> Findings {
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
