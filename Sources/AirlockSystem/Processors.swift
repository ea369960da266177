#if canImport(Glibc)
import Glibc
#endif

/// The machine's processors, as sysconf(3) counts them.
public enum Processors {
    /// sysconf(_SC_NPROCESSORS_ONLN): the processors online now; at least 1 (sysconf
    /// fails with -1 only on a system that cannot say, and then one is assumed).
    public static var online: Int {
        max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
