import AirlockEvents
import AirlockRoot
import AirlockSystem

// How an instance of a fleet takes over the work of one that died (or froze and
// was evicted by the filesystem's server, which freed its locks):
//
//   1. take OTHER.lock (LOCK_EX|LOCK_NB): it is free only when OTHER is not running;
//   2. bump OTHER's generation (NAME.json, replaced by a rename), state `taken-over`:
//      a revived OTHER finds it at its next look, before any commit, and stops;
//      then wait for OTHER's journal lock: an append that looked before the bump
//      is written before recovery (step 4) looks for its record;
//   3. rename each staging/OTHER/ID aside into this instance's staging (removed
//      after step 4): the rename has one winner, so either OTHER's outbox rename of
//      that directory happened first (whole, and found by its commit note below) or
//      it fails with ENOENT; a directory half removed never reaches the outbox;
//   4. rename each claimed/OTHER/ID to claimed/SELF/ID (one winner again: a loser
//      gets ENOENT and leaves it), then recover it as a start does: a decided claim
//      is finished (its terminal record written unless one is in any journal of the
//      root), an undecided one decoded again;
//   5. let OTHER.lock go.
//
// A single daemon's claims (state/claimed/ID, from before the root became a
// fleet's) are adopted the same way by whichever instance starts first.
extension Intake {
    /// Tries every other instance's lock and takes over each one it gets that left
    /// work behind or did not stop cleanly; adopted claims that are not decided go
    /// to `reprocess`. Returns the instances taken over.
    @discardableResult
    public func takeOverStoppedInstances(reprocess: (ClaimTicket) -> Void) -> [String] {
        guard let instance = settlement.instance, let me = layout.instance else { return [] }
        let names: [String]
        do {
            names = try instance.instances.names()
        } catch {
            log.warning("cannot list the instances of the fleet: \(error)")
            return []
        }
        var taken: [String] = []
        for other in names where other != me {
            do {
                if try takeOver(other, by: me, instances: instance.instances, reprocess: reprocess) { taken.append(other) }
            } catch {
                log.warning("take-over of instance \(other): \(error); tried again at the next poll")
            }
        }
        return taken
    }

    /// Takes over `other` if its lock is free and it left work or did not stop cleanly.
    private func takeOver(_ other: String, by me: String, instances: InstanceDirectory,
                          reprocess: (ClaimTicket) -> Void) throws(SystemError) -> Bool {
        // Held, and so locked, until the take-over is done.
        let lock = OwnedDescriptor(try instances.openLock(other))
        defer { withExtendedLifetime(lock) {} }
        guard try lock.descriptor.tryLockExclusive() else { return false }
        let claimsOwner = try openIfPresent(layout.claimedRoot, other)
        let stagingOwner = try openIfPresent(layout.stagingRoot, other)
        defer { withExtendedLifetime((claimsOwner, stagingOwner)) {} }
        let claims = claimsOwner?.descriptor, staging = stagingOwner?.descriptor
        let claimIDs = try claims?.entryNames() ?? []
        let staged = try staging?.entryNames() ?? []
        var record = instances.record(other) ?? InstanceRecord(instance: other)
        guard record.state == "running" || !claimIDs.isEmpty || !staged.isEmpty else { return false }
        let before = record.generation
        record.generation += 1
        record.state = "taken-over"
        record.takenOverBy = me
        record.takenOverAt = timestamp()
        try instances.write(record)
        // An append of OTHER that looked at its generation just before the bump may
        // still be on its way: a frozen process on a filesystem that frees its locks
        // but does not fence its writes. Waited for, so that recovery finds its record.
        try settlement.journal.awaitAppends(of: other, seconds: 10)
        // The staging directories set aside are removed only once the claims are
        // settled: while they exist their inodes cannot be given to another commit,
        // which a commit note naming one could then be mistaken for.
        let aside = try staging.map { (staging) throws(SystemError) in try setAside(staged, from: staging, label: other) } ?? []
        defer { aside.forEach { try? layout.staging.removeTree($0) } }
        var adopted = 0
        if let claims {
            adopted = try adopt(claimIDs, from: claims, reprocess: reprocess)
        }
        log.info("take-over: instance \(other) by \(me): generation \(before), \(adopted) claims adopted")
        return true
    }

    /// Claims a single daemon left in `state/claimed/ID` (a root laid out before it
    /// became a fleet's), and its staging, adopted by this instance. Returns how many.
    @discardableResult
    public func adoptSingleDaemonClaims(reprocess: (ClaimTicket) -> Void) throws(SystemError) -> Int {
        guard layout.instance != nil else { return 0 }
        let staged = try layout.stagingRoot.entryNames().filter(Claim.looksLikeID)
        let aside = try setAside(staged, from: layout.stagingRoot, label: "single")
        defer { aside.forEach { try? layout.staging.removeTree($0) } }
        let ids = try layout.claimedRoot.entryNames().filter(Claim.looksLikeID)
        let adopted = try adopt(ids, from: layout.claimedRoot, reprocess: reprocess)
        if adopted > 0 { log.info("upgrade: \(adopted) claims of the single daemon adopted by instance \(layout.instance!)") }
        return adopted
    }

    /// Renames each of `names` in `directory` aside into this instance's staging;
    /// returns the names they have there, for the caller to remove.
    private func setAside(_ names: [[UInt8]], from directory: FileDescriptor, label: String) throws(SystemError) -> [[UInt8]] {
        var aside: [[UInt8]] = []
        for name in names {
            let target = Array(".taken-\(label)-".utf8) + name
            do {
                try directory.rename(name, to: layout.staging, target)
            } catch where error.errno == .noEntry {
                continue  // its owner committed it, or another instance took it
            }
            aside.append(target)
        }
        return aside
    }

    /// Renames each claim of `ids` in `directory` into this instance's claims and
    /// recovers it; a claim another process moved first is left to it.
    private func adopt(_ ids: [[UInt8]], from directory: FileDescriptor, reprocess: (ClaimTicket) -> Void) throws(SystemError) -> Int {
        var adopted = 0
        for id in ids.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            do {
                try settlement.commitMode.move(id, in: directory, to: layout.claimed, id)
            } catch where error.errno == .noEntry {
                continue
            }
            adopted += 1
            try settlement.recoverClaim(id, reprocess: reprocess)
        }
        return adopted
    }

    /// The directory `name` in `parent`, owned until the last reference goes; nil when missing.
    private func openIfPresent(_ parent: FileDescriptor, _ name: String) throws(SystemError) -> SharedDescriptor? {
        do {
            return SharedDescriptor(OwnedDescriptor(try parent.openDirectory(Array(name.utf8))))
        } catch where error.errno == .noEntry {
            return nil
        }
    }
}
