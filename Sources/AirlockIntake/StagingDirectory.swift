import AirlockEvents
import AirlockSystem

/// One drop's staging directory, state/staging/ID, from its making until the
/// drop is decided. It is closed whatever way the decision ends, and removed
/// unless the drop was accepted (the commit has then renamed it into the
/// outbox): a verdict, a thrown error or an early return leaves no decoded tree
/// behind, and no path has to remember to remove it.
struct StagingDirectory: ~Copyable {
    /// state/staging, and the directory's name in it (the drop's id).
    private let parent: FileDescriptor
    private let name: [UInt8]
    /// The directory, for the decoder child and the audit; closed by this owner.
    let descriptor: FileDescriptor
    /// Set once nothing is left to remove: committed, or removed already.
    private var settled = false

    /// Makes state/staging/NAME (0700, empty) and opens it.
    init(in parent: FileDescriptor, _ name: [UInt8]) throws(SystemError) {
        try parent.makeDirectory(name, mode: 0o700)
        do {
            descriptor = try parent.openDirectory(name)
        } catch {
            try? parent.removeTree(name)
            throw error
        }
        self.parent = parent
        self.name = name
    }

    /// Ends it for `verdict`: an accepted drop's directory is in the outbox now
    /// and is only closed; any other is removed, and a removal that fails is
    /// thrown (the drop then waits, deferred, and the next attempt removes it).
    consuming func finish(_ verdict: DropOutcome.Verdict) throws(SystemError) {
        if case .accepted = verdict {
            settled = true
            return
        }
        try parent.removeTree(name)
        settled = true
    }

    deinit {
        descriptor.close()
        if !settled { try? parent.removeTree(name) }
    }
}
