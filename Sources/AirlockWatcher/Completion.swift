import AirlockConfiguration
import AirlockIntake
import AirlockSystem
import AirlockText

/// Decides whether a name in the inbox is complete, by `watch.completion`:
/// `lease`, nobody holds it open for writing (a read lease can be taken, which
/// the daemon made sure of before it started); `renamed`, it was moved or linked
/// into the inbox, or (found by listing) its size and times stood still across
/// a settle interval.
struct CompletionCheck {
    enum Readiness: Equatable {
        case ready
        case writerActive
        case vanished
        /// Not a single-linked regular file: claimed at once, never opened.
        case notRegular
        /// Linked in by OpenSSH's legacy SFTP rename, its temporary name not yet unlinked.
        case renameInProgress
    }

    var rule: Completion
    /// Names already reported as refusing a lease, reported once each.
    private var leaseRefusals = Set<[UInt8]>()
    let log: (String) -> Void

    init(rule: Completion, log: @escaping (String) -> Void) {
        self.rule = rule
        self.log = log
    }

    /// - Parameter entry: the tracker's entry: whether it was renamed in, and the
    ///   status seen at the previous check for the stability rule (updated).
    mutating func check(_ name: [UInt8], in inbox: FileDescriptor, entry: inout InboxTracker.Entry,
                        isTemporary: ([UInt8]) -> Bool) -> Readiness {
        let status: FileStatus
        do {
            status = try inbox.status(of: name)
        } catch {
            return .vanished
        }
        if status.kind == .regular && status.linkCount == 2
            && LinkedRename.inProgress(name, status, in: inbox, isTemporary: isTemporary) {
            return .renameInProgress
        }
        guard status.kind == .regular, status.linkCount == 1 else { return .notRegular }
        switch rule {
        case .renamed:
            return entry.renamed ? .ready : stability(status, &entry.lastSeen)
        case .lease:
            return leaseCheck(name, status, in: inbox, lastSeen: &entry.lastSeen)
        }
    }

    private mutating func leaseCheck(_ name: [UInt8], _ status: FileStatus, in inbox: FileDescriptor,
                                     lastSeen: inout FileStatus?) -> Readiness {
        let fd: FileDescriptor
        do {
            fd = try inbox.open(name, [.readOnly, .noFollow, .nonBlocking])
        } catch where error.errno == .permissionDenied || error.errno == .notPermitted {
            // Only without CAP_DAC_READ_SEARCH: a drop airlock may not read has no
            // lease to give; it is complete once its size and times stand still,
            // and the claim then judges it unreadable.
            return stability(status, &lastSeen)
        } catch {
            return error.errno == .noEntry ? .vanished : .writerActive
        }
        defer { fd.close() }
        do {
            try fd.takeReadLease()
            fd.releaseLease()
            leaseRefusals.remove(name)
            return .ready
        } catch where error.errno == .wouldBlock {
            return .writerActive
        } catch {
            // The daemon checked at start that leases can be taken; a refusal now
            // (CAP_LEASE gone, another filesystem mounted over the inbox) must not
            // let a half-written upload through: the name waits.
            if leaseRefusals.count > 1024 { leaseRefusals.removeAll() }  // bounded: at worst a name is reported again
            if leaseRefusals.insert(name).inserted {
                log("cannot take a read lease on \(EscapedName(name)) (\(error.errno)); it waits until one can be taken or watch.max_wait_seconds passes")
            }
            return .writerActive
        }
    }

    /// Ready when the status is what it was at the previous check.
    private func stability(_ status: FileStatus, _ lastSeen: inout FileStatus?) -> Readiness {
        defer { lastSeen = status }
        if let previous = lastSeen, previous == status { return .ready }
        return .writerActive
    }
}
