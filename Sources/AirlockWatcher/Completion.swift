import AirlockSystem

/// Decides whether a name in the inbox is complete: nobody holds it open for
/// writing (a read lease can be taken), or, where the kernel refuses leases, its
/// size and times stood still across a settle interval.
struct CompletionCheck {
    enum Readiness: Equatable {
        case ready
        case writerActive
        case vanished
        /// Not a single-linked regular file: claimed at once, never opened.
        case notRegular
    }

    /// nil until the first attempt tells whether the kernel grants leases here.
    private(set) var leasesWork: Bool?
    let log: (String) -> Void

    init(log: @escaping (String) -> Void) {
        self.log = log
    }

    /// - Parameter lastSeen: the status seen at the previous check, for the
    ///   stability fallback; updated.
    mutating func check(_ name: [UInt8], in inbox: FileDescriptor, lastSeen: inout FileStatus?) -> Readiness {
        let status: FileStatus
        do {
            status = try inbox.status(of: name)
        } catch {
            return .vanished
        }
        guard status.kind == .regular, status.linkCount == 1 else { return .notRegular }
        if leasesWork != false {
            let fd: FileDescriptor
            do {
                fd = try inbox.open(name, [.readOnly, .noFollow, .nonBlocking])
            } catch where error.errno == .permissionDenied || error.errno == .notPermitted {
                // A drop airlock may not read has no lease to give: it is complete once
                // its size and times stand still, and the claim then judges it unreadable.
                return stability(status, &lastSeen)
            } catch {
                return error.errno == .noEntry ? .vanished : .writerActive
            }
            defer { fd.close() }
            do {
                try fd.takeReadLease()
                fd.releaseLease()
                leasesWork = true
                return .ready
            } catch where error.errno == .wouldBlock {
                leasesWork = true
                return .writerActive
            } catch where error.errno == .permissionDenied || error.errno == .invalidArgument {
                if leasesWork == nil {
                    log("the kernel refuses read leases here (\(error.errno)); a drop is taken once its size and times stand still for the settle interval")
                }
                leasesWork = false
            } catch {
                return .writerActive
            }
        }
        return stability(status, &lastSeen)
    }

    /// Ready when the status is what it was at the previous check.
    private func stability(_ status: FileStatus, _ lastSeen: inout FileStatus?) -> Readiness {
        defer { lastSeen = status }
        if let previous = lastSeen, previous == status { return .ready }
        return .writerActive
    }
}
