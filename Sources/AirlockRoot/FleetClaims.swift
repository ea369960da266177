import AirlockConfiguration
import AirlockSystem

extension RootLayout {
    /// Every claim of the root, a single daemon's (`state/claimed/ID`) and each
    /// instance's (`state/claimed/NAME/ID`): `body` gets the directory holding it
    /// and its id. For readers (status, metrics); an instance works on its own.
    public func eachClaim(_ body: (FileDescriptor, [UInt8]) -> Void) throws(SystemError) {
        // An instance's directory is named after an instance that has a lock file;
        // anything else in state/claimed is a single daemon's claim.
        let instances = Set(self.instances().map { Array($0.record.instance.utf8) })
        for name in try claimedRoot.entryNames() {
            guard instances.contains(name), !ClusterSettings.looksLikeClaimID(name),
                  let opened = try? claimedRoot.openDirectory(name) else {
                body(claimedRoot, name)
                continue
            }
            let instance = OwnedDescriptor(opened)
            for id in (try? instance.descriptor.entryNames()) ?? [] { body(instance.descriptor, id) }
        }
    }

    /// The instances of a fleet that ran on this root, with whether each runs now
    /// (its lock is held); empty for a root no fleet ran on.
    public func instances() -> [(record: InstanceRecord, running: Bool)] {
        guard let directory = try? InstanceDirectory.open(state, create: false) else { return [] }
        return ((try? directory.names()) ?? []).map { name in
            (directory.record(name) ?? InstanceRecord(instance: name), directory.isHeld(name))
        }
    }
}
