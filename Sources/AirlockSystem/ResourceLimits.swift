#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims

/// A resource limit of this process (setrlimit(2)).
public enum ResourceLimit: Sendable, CaseIterable {
    case coreFileSize, addressSpace, cpuSeconds, openFiles, fileSize, processes

    var resource: __rlimit_resource {
        switch self {
        case .coreFileSize: return RLIMIT_CORE
        case .addressSpace: return RLIMIT_AS
        case .cpuSeconds: return RLIMIT_CPU
        case .openFiles: return RLIMIT_NOFILE
        case .fileSize: return RLIMIT_FSIZE
        case .processes: return __RLIMIT_NPROC
        }
    }

    var name: String {
        switch self {
        case .coreFileSize: return "RLIMIT_CORE"
        case .addressSpace: return "RLIMIT_AS"
        case .cpuSeconds: return "RLIMIT_CPU"
        case .openFiles: return "RLIMIT_NOFILE"
        case .fileSize: return "RLIMIT_FSIZE"
        case .processes: return "RLIMIT_NPROC"
        }
    }

    /// setrlimit(2) with the soft and hard limit both `value`: it can never be raised again.
    public func set(_ value: Int64) throws(SystemError) {
        var limit = rlimit(rlim_cur: rlim_t(value), rlim_max: rlim_t(value))
        _ = try retrying("setrlimit(\(name))") { setrlimit(__rlimit_resource_t(resource.rawValue), &limit) }
    }
}

extension CurrentProcess {
    /// close_range(2) of every descriptor from `first` up (a close loop where the
    /// kernel lacks the call).
    public static func closeDescriptors(from first: FileDescriptor) throws(SystemError) {
        _ = try retrying("close_range") { airlock_close_from(UInt32(first.rawValue)) }
    }

    /// prctl(PR_SET_PDEATHSIG): `signal` arrives when the parent dies from now on.
    public static func setParentDeathSignal(_ signal: Signal) throws(SystemError) {
        _ = try retrying("prctl(PR_SET_PDEATHSIG)") { airlock_set_parent_death_signal(signal.rawValue) }
    }
}
