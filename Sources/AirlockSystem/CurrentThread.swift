#if canImport(Glibc)
import Glibc
#endif

/// The calling thread.
public enum CurrentThread {
    /// pthread_self(3): names this thread while it lives; a later thread may reuse it.
    public static var id: UInt { UInt(pthread_self()) }
}
