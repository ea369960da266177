import AirlockConfiguration
import AirlockJournal
import AirlockRoot
import AirlockSystem

extension Daemon {
    /// An instance of a fleet, once per `watch.poll_seconds`: stops if another
    /// instance took it over; takes over the instances that stopped leaving work;
    /// on a shared root, lists the inbox (inotify does not see other hosts' writes).
    func poll(now: UInt64) {
        nextPoll = now + UInt64(configuration.watch.pollSeconds) * 1_000_000_000
        guard let instance = setup.instance else { return }
        let record = instance.instances.record(instance.name)
        if let fenced = instance.fenced(seeing: record) {
            fencedDetail = fenced
            return
        }
        // One unreadable look at its own record proves nothing (a record being
        // replaced, a network hiccup), but an instance that cannot read it for three
        // polls in a row has most likely lost its filesystem: a CephFS client the
        // servers evicted while it was frozen gets ESHUTDOWN for ever. It commits
        // nothing then (every commit checks the record first); it stops, so that its
        // service manager starts it afresh on a working mount.
        if record == nil {
            unreadableRecordPolls += 1
            if unreadableRecordPolls >= 3 {
                fencedDetail = "instance \(instance.name) cannot read its own record (state/instances/\(instance.name).json) "
                    + "for \(unreadableRecordPolls) polls: its filesystem is gone or it was evicted; stopping"
                return
            }
        } else {
            unreadableRecordPolls = 0
        }
        pool.intake.takeOverStoppedInstances { backlog.append($0) }
        if configuration.cluster.shared { rescan(now: now) }
    }

    /// A name a local producer closed after writing it in place, on a shared root
    /// without `cluster.settled_writes`: no lease can say another host's writer is
    /// done, so only a rename completes a drop there, and this one waits for its
    /// rename (remembered for at most 65536 names).
    ///
    /// A poll may have listed the name before its close was read (the listing and
    /// the event race under load): it is then withdrawn from the names waiting to
    /// settle, or it would be taken unrenamed.
    func noteWrittenInPlace(_ name: [UInt8]) {
        guard configuration.cluster.shared, writtenInPlace.count < 65536 else { return }
        writtenInPlace.insert(name)
        inbox.forgetUnlessRenamed(name)
    }

    /// `names` (a listing) without those written in place and not renamed since;
    /// the names no longer listed are forgotten.
    func leavingWrittenInPlace(_ names: [[UInt8]]) -> [[UInt8]] {
        guard !writtenInPlace.isEmpty else { return names }
        writtenInPlace.formIntersection(names)
        return names.filter { !writtenInPlace.contains($0) }
    }

    /// Where entries that cannot be moved out of the inbox are reported: the root's
    /// journal for a single daemon, as always; an instance's own in a fleet.
    static func stuckJournal(_ layout: RootLayout, _ configuration: Configuration) -> Journal {
        guard layout.instance != nil else {
            return Journal(state: layout.state, maxBytes: configuration.journalMaxBytes, keep: configuration.journalKeep)
        }
        return Journal(layout, configuration)
    }

    /// Takes the root's run lock; the exit status when it cannot.
    func takeRunLock() -> Int32? {
        do {
            guard let taken = try RunLock.acquire(layout, mode: "daemon") else {
                let holder = RunLock.holder(layout)
                log.error("another airlock (pid \(holder.pid.map(String.init) ?? "unknown")) is running on \(setup.rootPath)")
                return 75
            }
            runLock = taken
            return nil
        } catch {
            log.error("cannot take the run lock: \(error)")
            return 74
        }
    }
}
