#if canImport(Glibc)
import Glibc
#endif

extension CurrentProcess {
    /// getrusage(2) of this process: the CPU time (user and system) spent so far,
    /// in whole seconds rounded up, as RLIMIT_CPU counts it.
    public static func cpuSecondsSpent() -> Int64 {
        var usage = rusage()
        // RUSAGE_SELF with a valid buffer cannot fail; 0 would only make the limit stricter.
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        let microseconds = (Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)) * 1_000_000
            + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec)
        return (microseconds + 999_999) / 1_000_000
    }
}
