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

    public init(addressSpaceBytes: Int64, cpuSeconds: Int64, openFiles: Int64, fileSizeBytes: Int64) {
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.openFiles = openFiles
        self.fileSizeBytes = fileSizeBytes
    }

    public var arguments: [String] {
        ["--limit-as=\(addressSpaceBytes)", "--limit-cpu=\(cpuSeconds)", "--limit-nofile=\(openFiles)", "--limit-fsize=\(fileSizeBytes)"]
    }

    /// Takes the four `--limit-…` arguments out of `list`; nil unless all four are
    /// there, once each, positive.
    public init?(taking list: inout [String]) {
        var values: [String: Int64] = [:]
        var rest: [String] = []
        for argument in list {
            guard argument.hasPrefix("--limit-") else { rest.append(argument); continue }
            let parts = argument.dropFirst(8).split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Int64(parts[1]), value > 0, values[parts[0]] == nil else { return nil }
            values[parts[0]] = value
        }
        guard values.count == 4, let space = values["as"], let cpu = values["cpu"], let files = values["nofile"],
              let size = values["fsize"] else { return nil }
        self.init(addressSpaceBytes: space, cpuSeconds: cpu, openFiles: files, fileSizeBytes: size)
        list = rest
    }
}

/// What confinement the kernel actually granted a decoder child.
public struct ConfinementReport: Sendable, Equatable {
    /// The Landlock ABI the kernel offers (0: none).
    public var landlockABI: Int32 = 0
    /// Whether the Landlock ruleset is in force.
    public var landlock = false
    /// Whether the seccomp filter is in force.
    public var seccomp = false
    /// Why something is missing, for the log.
    public var problems: [String] = []

    public var isComplete: Bool { landlock && seccomp }

    public var summary: String {
        "landlock=\(landlock ? "abi\(landlockABI)" : "off") seccomp=\(seccomp ? "on" : "off")"
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
    /// - Returns: what was granted. Missing kernel features are reported, not fatal.
    public static func apply(_ limits: DecoderLimits, staging: FileDescriptor?) throws(SystemError) -> ConfinementReport {
        try applyLimits(limits)
        var report = ConfinementReport()
        report.landlockABI = airlock_landlock_abi()
        if report.landlockABI > 0 {
            if airlock_landlock_restrict(staging?.rawValue ?? -1, min(report.landlockABI, 7)) == 0 {
                report.landlock = true
            } else {
                report.problems.append("Landlock ABI \(report.landlockABI) refused the ruleset: \(Errno.current)")
            }
        } else {
            report.problems.append("the kernel offers no Landlock")
        }
        let seccomp = airlock_seccomp_apply()
        if seccomp == 0 {
            report.seccomp = true
        } else {
            report.problems.append("seccomp filter not loaded: \(Errno(rawValue: -seccomp))")
        }
        return report
    }

    private static func applyLimits(_ limits: DecoderLimits) throws(SystemError) {
        _ = try retrying("close_range") { airlock_close_from(UInt32(resultDescriptor.rawValue + 1)) }
        _ = try retrying("prctl(PR_SET_NO_NEW_PRIVS)") { airlock_set_no_new_privs() }
        _ = try retrying("prctl(PR_SET_PDEATHSIG)") { airlock_set_parent_death_signal(SIGKILL) }
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
