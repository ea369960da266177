import AirlockChild
import AirlockSystem
import CAirlockShims
#if canImport(Glibc)
import Glibc
#endif

/// What the long-running process gives up: it keeps reading and executing as
/// before (it starts the decoders and reads its configuration), but from here on
/// it can write, create, rename and remove only beneath its root (and the
/// directory of an absolute metrics path), and write to /dev/null for the
/// children's standard output. Its decoder children inherit this and narrow it
/// further to their staging directory.
public enum SupervisorConfinement {
    /// Applies the ruleset where the kernel offers Landlock; returns a line for the log.
    public static func apply(_ layout: RootLayout, _ configuration: Configuration) -> (applied: Bool, message: String) {
        let landlock = ConfinementProbe.landlock()
        guard landlock.obstacle == nil else {
            return (false, "\(landlock.reason); the supervisor's writes are not confined")
        }
        let abi = landlock.abi
        guard let devNull = try? FileDescriptor(rawValue: retrying("open", Array("/dev/null".utf8)) {
            open("/dev/null", O_WRONLY | O_CLOEXEC)
        }) else {
            return (false, "cannot open /dev/null; the supervisor's writes are not confined")
        }
        defer { devNull.close() }
        var extra: FileDescriptor?
        if configuration.metricsPath.hasPrefix("/"), let slash = configuration.metricsPath.lastIndex(of: "/") {
            let directory = String(configuration.metricsPath[..<slash])
            extra = try? FileDescriptor.openDirectory(path: directory.isEmpty ? "/" : directory)
        }
        defer { extra?.close() }
        guard airlock_landlock_restrict_writes(layout.root.rawValue, extra?.rawValue ?? -1, devNull.rawValue, min(abi, 7)) == 0 else {
            return (false, "Landlock refused the supervisor's ruleset: \(Errno.current); its writes are not confined")
        }
        return (true, "the supervisor may write only beneath \(layout.path)\(extra != nil ? " and the metrics directory" : "") (Landlock ABI \(abi))")
    }
}
