import AirlockConfiguration
import AirlockRoot
import AirlockPolicy
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

/// What `doctor` says of sharing the root: how a commit works there, what kind of
/// filesystem it is, and what that means for `cluster.shared`.
struct FleetFindings {
    let commitMode: CommitMode
    let filesystem: String
    /// Whether the probe suggests the root is shared (NOREPLACE refused, or a
    /// network or FUSE filesystem).
    let looksShared: Bool
    let configured: ClusterSettings
    let pollSeconds: Int64

    /// Probes the root of `choice`; nil when its staging directory cannot be opened.
    static func probe(_ choice: Command.RootChoice, _ configuration: Configuration) -> FleetFindings? {
        guard let root = try? CommandRunner.resolveAsOwner(choice).root,
              let owned = try? OwnedDescriptor(FileDescriptor.openDirectory(path: root + "/state/staging")) else { return nil }
        let staging = owned.descriptor
        defer { withExtendedLifetime(owned) {} }
        let mode = CommitMode.probe(in: staging)
        let kind = try? FilesystemKind(of: staging)
        return FleetFindings(commitMode: mode, filesystem: kind?.description ?? "unknown",
                             looksShared: mode == .rename || kind?.isNetworkOrFUSE == true,
                             configured: configuration.cluster, pollSeconds: configuration.watch.pollSeconds)
    }

    var commitText: String {
        commitMode == .noreplace ? "renameat2(RENAME_NOREPLACE)" : "rename(2) of a never-empty directory (RENAME_NOREPLACE refused)"
    }

    /// One line for a person.
    var line: String {
        let shared = SettingDefinition.clusterShared.name, settled = SettingDefinition.clusterSettledWrites.name
        var text = "commit by \(commitText) on \(filesystem); "
        if configured.shared {
            text += "\(shared): the inbox is listed every \(pollSeconds) s and only renamed drops are taken"
                + (configured.settledWrites ? ", and drops written in place once their size and mtime stood still for a poll (\(settled))"
                   : " (\(settled) is off)")
        } else if looksShared {
            text += "this filesystem may be shared by other hosts: if it is, set \(shared) true on every instance"
        } else {
            text += "a local root (\(shared) is off)"
        }
        return text
    }

    func add(to json: inout JSONObjectWriter) {
        json.add("commit_mode", commitMode.rawValue)
        json.add("filesystem", filesystem)
        json.add("cluster_shared", configured.shared)
        json.add("cluster_shared_suggested", looksShared)
        json.add("cluster_settled_writes", configured.settledWrites)
    }
}
