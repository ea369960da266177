import AirlockConfiguration
import AirlockIntake
import AirlockSystem
import Foundation

extension Daemon {
    /// SIGHUP: re-reads the configuration file and, if it is valid and names the
    /// root this daemon runs on, puts it in force, then lists the inbox again (a
    /// name no longer ignored is a drop now, not at the next periodic rescan).
    func reload() {
        guard let path = setup.configurationPath else {
            log.info("SIGHUP: no configuration file to reload; keeping the defaults")
            return
        }
        notifier.reloading()
        defer { notifier.ready() }
        do {
            var fresh = try Configuration.load(path: path)
            try fresh.checkPaths(in: layout, configurationFile: path)
            if let named = fresh.root, !Daemon.sameDirectory(named, setup.rootPath) {
                log.error("SIGHUP: \(path) names the root \(named), but this daemon runs on \(setup.rootPath); "
                          + "the root cannot change while running: configuration not reloaded (restart airlock to change the root)")
                return
            }
            if fresh.watch.workers != configuration.watch.workers {
                log.warning("SIGHUP: the number of workers changes at the next start")
            }
            if fresh.watch.completion != configuration.watch.completion {
                // The capability check that allows the rule is made at start.
                log.warning("SIGHUP: watch.completion changes at the next start; keeping \"\(configuration.watch.completion.rawValue)\"")
                fresh.watch.completion = configuration.watch.completion
            }
            if let warning = TemporaryNames.droppedDefaultsWarning(fresh.watch.ignore) { log.warning(warning) }
            let replacement = Intake(layout: layout, configuration: fresh, decoderDirectory: setup.decoderDirectory,
                                     log: log, children: children)
            pool.replaceIntake(replacement)
            // The next drop's template starts from the new configuration (its
            // magic database) and from the decoder programs now on disk.
            children.templates.replaceAll()
            configuration = fresh
            inbox.settle = UInt64(fresh.watch.settleMilliseconds) * 1_000_000
            log.info("SIGHUP: configuration reloaded from \(path)")
            rescan(now: monotonicNanoseconds())
        } catch {
            log.error("SIGHUP: \(error.message); keeping the configuration in force")
        }
    }

    /// Whether two paths name the same directory (symbolic links and `..` resolved).
    static func sameDirectory(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        guard let first = try? FileStatus(path: a), let second = try? FileStatus(path: b) else { return false }
        return first.device == second.device && first.inode == second.inode
    }
}
