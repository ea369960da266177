import AirlockConfiguration
import AirlockSystem

/// What the intake can do with files producers own: take a read lease (is an
/// upload still being written? CAP_LEASE) and read them whatever their mode
/// (CAP_DAC_READ_SEARCH), and whether the root's filesystem grants leases at all.
public struct ProducerFileAccess: Sendable {
    /// CAP_LEASE in the effective set: leases on files other users own.
    public var leasesOthers: Bool
    /// CAP_DAC_READ_SEARCH in the effective set: every drop readable, mode 0600 included.
    public var readsAll: Bool
    /// Why a lease on a file of the root's filesystem was refused even to its
    /// owner (overlay and network filesystems: EINVAL); nil when it was granted.
    public var filesystemRefusal: Errno?

    /// Looks at this process's capabilities, and takes a lease on a file of its
    /// own made for the purpose in `state/` (then removed).
    public static func probe(_ layout: RootLayout) -> ProducerFileAccess {
        let held = try? Capabilities.current()
        var found = ProducerFileAccess(leasesOthers: held?.holds(Capabilities.lease) ?? false,
                                       readsAll: held?.holds(Capabilities.dacReadSearch) ?? false, filesystemRefusal: nil)
        let name = Array("lease-probe.\(CurrentProcess.id)".utf8)
        do {
            let fd = try layout.state.open(name, [.readOnly, .create, .exclusive, .noFollow], mode: 0o600)
            defer {
                fd.close()
                try? layout.state.unlink(name)
            }
            try fd.takeReadLease()
            fd.releaseLease()
        } catch {
            found.filesystemRefusal = error.errno
        }
        return found
    }

    /// Why `airlock run` must not start with `rule`, or nil: a lease that cannot
    /// be taken would let a half-written upload be claimed as complete.
    public func refusal(_ rule: Completion, root: String) -> (status: Int32, message: String)? {
        guard rule == .lease else { return nil }
        let instead = "or, to take only drops renamed into the inbox and never wait on a writer, set \"watch\": {\"completion\": \"renamed\"} in airlock.json"
        if let errno = filesystemRefusal {
            return (78, "the filesystem of \(root) grants no read leases (\(errno)), so airlock cannot tell a finished upload "
                    + "from one still being written; \(instead)")
        }
        guard !leasesOthers else { return nil }
        return (77, "airlock lacks CAP_LEASE: it cannot take read leases on producers' files, so an upload still being written "
                + "would be claimed half-written. Grant it in the systemd unit (AmbientCapabilities=CAP_LEASE CAP_DAC_READ_SEARCH, "
                + "as the shipped airlock.service does), or start it by hand as root with "
                + "setpriv --reuid=airlock --regid=airlock --init-groups --inh-caps=+lease,+dac_read_search "
                + "--ambient-caps=+lease,+dac_read_search airlock run …; \(instead)")
    }

    /// A warning for a process that cannot read a producer's mode-0600 file, or nil.
    public var readWarning: String? {
        readsAll ? nil : "airlock lacks CAP_DAC_READ_SEARCH: a drop its producer made unreadable to others "
            + "(mode 0600, as sftp, scp and rsync -a keep a local file's mode) is quarantined as unreadable-drop; "
            + "the shipped airlock.service grants it"
    }

    /// One line for `status` and `doctor`.
    public static func describe(_ rule: Completion) -> String {
        switch rule {
        case .lease: return "lease: a drop is complete once no process holds it open for writing (needs CAP_LEASE)"
        case .renamed:
            return "renamed: only a rename into the inbox completes a drop (no leases); names found by listing are taken "
                + "once their size and times stand still for watch.settle_milliseconds"
        }
    }
}
