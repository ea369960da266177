#if canImport(Glibc)
import Glibc
#endif
import AirlockSystem
import CAirlockShims

/// The limits a decoder child puts on itself before it reads a byte of the drop.
public struct DecoderLimits: Sendable, Equatable {
    public var addressSpaceBytes: Int64
    public var cpuSeconds: Int64
    public var openFiles: Int64
    /// One byte over the per-file quota, so an over-quota write fails in the kernel too.
    public var fileSizeBytes: Int64
    /// Whether a mechanism the kernel offers but something refuses stops the child
    /// from decoding (`decoder.confinement: "required"`), or only gets reported.
    public var requiresConfinement: Bool

    public init(addressSpaceBytes: Int64, cpuSeconds: Int64, openFiles: Int64, fileSizeBytes: Int64,
                requiresConfinement: Bool = true) {
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.openFiles = openFiles
        self.fileSizeBytes = fileSizeBytes
        self.requiresConfinement = requiresConfinement
    }

    public var arguments: [String] {
        ["--limit-as=\(addressSpaceBytes)", "--limit-cpu=\(cpuSeconds)", "--limit-nofile=\(openFiles)", "--limit-fsize=\(fileSizeBytes)",
         "--confinement=\(requiresConfinement ? "required" : "best-effort")"]
    }

    /// Takes the four `--limit-…` arguments and `--confinement=` out of `list`; nil
    /// unless all four limits are there, once each, positive. Without
    /// `--confinement=` confinement is required: a child fails closed.
    public init?(taking list: inout [String]) {
        var values: [String: Int64] = [:]
        var required: Bool?
        var rest: [String] = []
        for argument in list {
            if argument.hasPrefix("--confinement=") {
                guard required == nil else { return nil }
                switch argument.dropFirst(14) {
                case "required": required = true
                case "best-effort": required = false
                default: return nil
                }
                continue
            }
            guard argument.hasPrefix("--limit-") else { rest.append(argument); continue }
            let parts = argument.dropFirst(8).split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Int64(parts[1]), value > 0, values[parts[0]] == nil else { return nil }
            values[parts[0]] = value
        }
        guard values.count == 4, let space = values["as"], let cpu = values["cpu"], let files = values["nofile"],
              let size = values["fsize"] else { return nil }
        self.init(addressSpaceBytes: space, cpuSeconds: cpu, openFiles: files, fileSizeBytes: size,
                  requiresConfinement: required ?? true)
        list = rest
    }
}

/// What confinement the kernel actually granted a decoder child.
public struct ConfinementReport: Sendable, Equatable {
    /// The Landlock ABI the kernel offers (0: none).
    public var landlockABI: Int32 = 0
    public var landlockState: MechanismState = .notOffered
    public var seccompState: MechanismState = .notOffered
    /// Why something is missing, for the log.
    public var problems: [String] = []

    /// Whether the Landlock ruleset is in force.
    public var landlock: Bool { landlockState == .inForce }
    /// Whether the seccomp filter is in force.
    public var seccomp: Bool { seccompState == .inForce }

    public var isComplete: Bool { landlock && seccomp }

    /// Something the kernel offers was refused: with confinement required, the
    /// child must not decode.
    public var isRefused: Bool { landlockState == .refused || seccompState == .refused }

    public var summary: String {
        "landlock=\(landlock ? "abi\(landlockABI)" : landlockState.rawValue) seccomp=\(seccomp ? "on" : seccompState.rawValue)"
    }
}

/// Confines the current process: the one place the decoder child gives up what
/// it may do, before it reads a byte of the drop.
public enum Confinement {
    /// Descriptors the child inherits on purpose.
    public static let dropDescriptor = FileDescriptor(rawValue: 3)
    public static let stagingDescriptor = FileDescriptor(rawValue: 4)
    public static let resultDescriptor = FileDescriptor(rawValue: 5)

    /// Applies no_new_privs, death-with-parent, no core dumps and resource limits
    /// (after closing every descriptor above the result pipe), then Landlock and
    /// seccomp as far as the kernel offers them.
    ///
    /// - Parameter staging: the only directory the process may write beneath; nil
    ///   for inspection, which may write nowhere.
    /// - Returns: what was granted, and for what is missing whether the kernel
    ///   lacks it or something refused it. The caller decides whether to go on.
    public static func apply(_ limits: DecoderLimits, staging: FileDescriptor?) throws(SystemError) -> ConfinementReport {
        // Probed first: /proc and /sys are out of reach once Landlock is in force.
        let landlock = ConfinementProbe.landlock()
        let seccompObstacle = ConfinementProbe.seccompObstacle()
        try applyLimits(limits)
        var report = ConfinementReport()
        report.landlockABI = landlock.abi
        report.landlockState = landlock.obstacle ?? .inForce
        if landlock.obstacle == nil {
            if airlock_landlock_restrict(staging?.rawValue ?? -1, min(landlock.abi, 7)) != 0 {
                report.landlockState = .refused
                report.problems.append("Landlock ABI \(landlock.abi) refused the ruleset: \(Errno.current)")
            }
        } else {
            report.problems.append(landlock.reason)
        }
        if let (state, reason) = seccompObstacle {
            report.seccompState = state
            report.problems.append(reason)
        } else {
            let seccomp = airlock_seccomp_apply()
            if seccomp == 0 {
                report.seccompState = .inForce
            } else {
                report.seccompState = .refused
                report.problems.append("the seccomp filter was not loaded: \(Errno(rawValue: -seccomp))")
            }
        }
        return report
    }

    /// The supervisor's pid, which it passes in the environment under this name.
    public static let supervisorVariable = "AIRLOCK_SUPERVISOR_PID"

    /// Dies as the parent-death signal would have killed us, if the supervisor that
    /// started this child has already gone.
    ///
    /// PR_SET_PDEATHSIG only covers a parent that dies after the call: a supervisor
    /// SIGKILLed between spawning the child and the child's prctl leaves it
    /// reparented and running, and it would decode into a staging directory that the
    /// next supervisor's recovery is removing. Once the signal is set, a parent pid
    /// that is not the supervisor's means that window was hit.
    private static func dieIfOrphaned() {
        var variable = supervisorVariable
        #if DEBUG
        // Test-only: name a supervisor that is not the parent, as an orphan would see it.
        if getenv("AIRLOCK_TEST_SUPERVISOR_PID") != nil { variable = "AIRLOCK_TEST_SUPERVISOR_PID" }
        #endif
        guard let text = getenv(variable), let supervisor = pid_t(String(cString: text)) else { return }
        if getppid() != supervisor { kill(getpid(), SIGKILL) }
    }

    private static func applyLimits(_ limits: DecoderLimits) throws(SystemError) {
        _ = try retrying("close_range") { airlock_close_from(UInt32(resultDescriptor.rawValue + 1)) }
        _ = try retrying("prctl(PR_SET_NO_NEW_PRIVS)") { airlock_set_no_new_privs() }
        _ = try retrying("prctl(PR_SET_PDEATHSIG)") { airlock_set_parent_death_signal(SIGKILL) }
        dieIfOrphaned()
        // A write past RLIMIT_FSIZE should fail with EFBIG rather than kill us with SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        try setLimit(RLIMIT_CORE, 0, "RLIMIT_CORE")
        try setLimit(RLIMIT_AS, limits.addressSpaceBytes, "RLIMIT_AS")
        try setLimit(RLIMIT_CPU, limits.cpuSeconds, "RLIMIT_CPU")
        try setLimit(RLIMIT_NOFILE, limits.openFiles, "RLIMIT_NOFILE")
        try setLimit(RLIMIT_FSIZE, limits.fileSizeBytes, "RLIMIT_FSIZE")
        // No new processes (ignored for root, where seccomp does the work).
        try setLimit(__RLIMIT_NPROC, 0, "RLIMIT_NPROC")
    }

    private static func setLimit(_ resource: __rlimit_resource, _ value: Int64, _ name: String) throws(SystemError) {
        var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
        _ = try retrying("setrlimit(\(name))") { setrlimit(__rlimit_resource_t(resource.rawValue), &limit) }
    }
}
