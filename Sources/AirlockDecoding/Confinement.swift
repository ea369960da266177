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
}

/// Confines the current process. This is the one place the decoder child drops
/// what it may do; Landlock and seccomp belong here too.
public enum Confinement {
    /// Descriptors the child inherits on purpose.
    public static let dropDescriptor = FileDescriptor(rawValue: 3)
    public static let stagingDescriptor = FileDescriptor(rawValue: 4)
    public static let resultDescriptor = FileDescriptor(rawValue: 5)

    /// Applies no_new_privs, death-with-parent, no core dumps, and resource limits,
    /// after closing every descriptor above the result pipe.
    public static func apply(_ limits: DecoderLimits) throws(SystemError) {
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
    }

    private static func setLimit(_ resource: __rlimit_resource, _ value: Int64, _ name: String) throws(SystemError) {
        var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
        _ = try retrying("setrlimit(\(name))") { setrlimit(__rlimit_resource_t(resource.rawValue), &limit) }
    }
}
