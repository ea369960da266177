import AirlockSystem

extension RootLayout {
    /// Every claim of the root, a single daemon's (`state/claimed/ID`) and each
    /// instance's (`state/claimed/NAME/ID`): `body` gets the directory holding it
    /// and its id. For readers (status, metrics); an instance works on its own.
    public func eachClaim(_ body: (FileDescriptor, [UInt8]) -> Void) throws(SystemError) {
        for name in try claimedRoot.entryNames() {
            if Claim.looksLikeID(name) {
                body(claimedRoot, name)
                continue
            }
            guard ClusterSettings.problem(with: String(decoding: name, as: UTF8.self)) == nil,
                  let instance = try? claimedRoot.openDirectory(name) else { continue }
            defer { instance.close() }
            for id in (try? instance.entryNames()) ?? [] { body(instance, id) }
        }
    }

    /// The instances of a fleet that ran on this root, with whether each runs now
    /// (its lock is held); empty for a root no fleet ran on.
    public func instances() -> [(record: InstanceRecord, running: Bool)] {
        guard let directory = try? InstanceDirectory.open(state, create: false) else { return [] }
        defer { directory.close() }
        return ((try? directory.names()) ?? []).map { name in
            (directory.record(name) ?? InstanceRecord(instance: name), directory.isHeld(name))
        }
    }
}
