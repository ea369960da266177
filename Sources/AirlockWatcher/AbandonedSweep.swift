import AirlockDesk
import AirlockSystem

extension Daemon {
    /// With `watch.abandoned_remove_seconds` set, removes the temporary names no
    /// one has written for that long and no one holds open for writing, once per
    /// rescan; each removal is logged with the name, its size and its age.
    func removeAbandonedUploads(now: UInt64) {
        let seconds = configuration.watch.abandonedRemoveSeconds
        guard seconds > 0 else { return }
        withInbox(now: now) { directory in
            for gone in AbandonedUploads.removeStale(directory, configuration, olderThan: seconds) {
                log.info("removed the abandoned upload \(gone.name) (\(gone.bytes) bytes, last written \(gone.age) s ago; watch.abandoned_remove_seconds is \(seconds))")
            }
        }
    }
}
