import AirlockCore
import AirlockSystem

/// One instance of a fleet, started: its lock held and the commit its filesystem allows.
struct FleetInstance {
    let lock: InstanceLock
    let commitMode: CommitMode
}

extension CommandRunner {
    enum InstanceStart {
        /// A single daemon: no cluster settings, no --instance.
        case single
        case started(FleetInstance)
        case failed(Int32)
    }

    /// The instance this run is (`--instance`, `cluster.instance`, or the host name on
    /// a shared root): `layout` reopened for it and its lock taken. A single daemon
    /// keeps the layout as it is.
    static func startInstance(given: String?, _ configuration: Configuration, _ layout: inout RootLayout) -> InstanceStart {
        let name: String
        do {
            guard let found = try configuration.cluster.instanceName(given: given) else { return .single }
            name = found
        } catch {
            log.error(error.message)
            return .failed(ExitStatus.configuration)
        }
        do {
            layout = try layout.forInstance(name)
        } catch {
            log.error("cannot lay out instance \(name) in \(layout.path): \(error)")
            return .failed(ExitStatus.ioError)
        }
        let mode = CommitMode.probe(in: layout.staging)
        do {
            let lock = try InstanceLock.acquire(layout, name: name, commitMode: mode)
            log.info("instance \(name), generation \(lock.generation); commit by \(mode == .noreplace ? "renameat2(RENAME_NOREPLACE)" : "rename(2) of a never-empty directory (RENAME_NOREPLACE refused)")")
            return .started(FleetInstance(lock: lock, commitMode: mode))
        } catch let refusal as InstanceLock.Refusal {
            log.error("instance \(name) on \(layout.path): \(refusal)")
            return .failed(ExitStatus.temporaryFailure)
        } catch {
            log.error("cannot take the lock of instance \(name): \(error)")
            return .failed(ExitStatus.ioError)
        }
    }

    /// What a shared root changes in the configuration a daemon runs with: no
    /// leases (they do not reach other hosts), so only a rename completes a drop,
    /// and a name found by listing is taken once it stood still for a poll interval.
    static func sharedRootConfiguration(_ configuration: Configuration) -> Configuration {
        guard configuration.cluster.shared else { return configuration }
        var adjusted = configuration
        adjusted.watch.completion = .renamed
        adjusted.watch.settleMilliseconds = max(configuration.watch.settleMilliseconds, configuration.watch.pollSeconds * 1000)
        return adjusted
    }
}
