import AirlockChild
import AirlockConfiguration
import AirlockSystem

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
        var metricsDirectory: String?
        if configuration.metricsPath.hasPrefix("/"), let slash = configuration.metricsPath.lastIndex(of: "/") {
            let directory = String(configuration.metricsPath[..<slash])
            metricsDirectory = directory.isEmpty ? "/" : directory
        }
        // Open until the ruleset holds it.
        if let metricsDirectory, let opened = try? OwnedDescriptor(FileDescriptor.openDirectory(path: metricsDirectory)) {
            return restrict(layout, abi: abi, extra: opened.descriptor)
        }
        return restrict(layout, abi: abi, extra: nil)
    }

    private static func restrict(_ layout: RootLayout, abi: Int32, extra: FileDescriptor?) -> (applied: Bool, message: String) {
        // Landlock confines the calling thread and the threads and processes it
        // starts afterwards, not threads already running: the ruleset covers the
        // whole supervisor only while it is one thread.
        let threads = Result { () throws(SystemError) in try SiblingFork.threadCount() }
        do {
            try LandlockRuleset.restrictWrites(beneath: layout.root, and: extra, abi: abi)
        } catch where error.operation == "open" {
            return (false, "cannot open /dev/null; the supervisor's writes are not confined")
        } catch {
            return (false, "Landlock refused the supervisor's ruleset: \(error.errno); its writes are not confined")
        }
        switch threads {
        case .failure(let error):
            return (false, "cannot count the supervisor's threads (\(error)); its writes are not all confined")
        case .success(let count) where count != 1:
            return (false, "\(count - 1) of the supervisor's threads started before its Landlock ruleset and are outside it; "
                        + "its writes are not all confined")
        case .success: break
        }
        return (true, "the supervisor may write only beneath \(layout.path)\(extra != nil ? " and the metrics directory" : "") (Landlock ABI \(abi))")
    }
}
