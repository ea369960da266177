import AirlockSystem

/// The names waiting in the inbox and when each may next be considered: pure
/// state, with the time passed in by the caller, so the rules can be checked
/// without a clock, a directory or a daemon.
///
/// A name moved into the inbox is the producer saying it is complete: it is due
/// at once, and only the lease check (no writer holds it) stands between it and
/// its claim. A name closed after writing may be written again (an appending
/// writer closes and reopens), so it is due only once no event has arrived for
/// it for the settle interval.
public struct InboxTracker {
    public struct Entry: Equatable {
        public var firstSeen: UInt64
        public var due: UInt64
        /// The status at the previous completion check, for the stability fallback.
        public var lastSeen: FileStatus?
        /// Whether it was moved (or linked) in rather than only found or written.
        public var renamed = false
    }

    /// What the caller decided about a due name.
    public enum Decision: Equatable {
        /// Look again at this time (a writer still holds it, or the claim failed).
        case waitUntil(UInt64)
        /// Claimed, vanished or reported: no longer waiting.
        case done
    }

    public var settle: UInt64
    private var pending: [[UInt8]: Entry] = [:]
    /// Pending names in the order first seen (may hold names since taken; those
    /// are skipped), so claiming walks from the oldest without sorting thousands.
    private var arrivals: [[UInt8]] = []

    public init(settle: UInt64) {
        self.settle = settle
    }

    public var count: Int { pending.count }
    public var isEmpty: Bool { pending.isEmpty }
    public func entry(_ name: [UInt8]) -> Entry? { pending[name] }

    /// The earliest time any name is due.
    public var earliestDue: UInt64? { pending.values.lazy.map(\.due).min() }

    /// An inotify event for `name`: moved in (due now) or closed after writing
    /// (due a settle interval after this, its latest, event).
    public mutating func noteEvent(_ name: [UInt8], renamed: Bool, now: UInt64) {
        let due = renamed ? now : now + settle
        if var entry = pending[name] {
            entry.due = due
            entry.lastSeen = nil
            entry.renamed = entry.renamed || renamed
            pending[name] = entry
        } else {
            add(name, Entry(firstSeen: now, due: due, lastSeen: nil, renamed: renamed))
        }
    }

    /// Names found by listing the inbox. Those already there when watching began
    /// are due at once; those found later by a scan settle first, since how they
    /// arrived is not known.
    public mutating func noteListed(_ names: [[UInt8]], now: UInt64, atStart: Bool) {
        for name in names where pending[name] == nil {
            add(name, Entry(firstSeen: now, due: atStart ? now : now + settle, lastSeen: nil))
        }
    }

    /// Stops waiting for `name` if a listing found it and no rename has been seen
    /// for it: a writer has since been seen closing it in place (see
    /// Daemon.noteWrittenInPlace), so only a rename may complete it now.
    public mutating func forgetUnlessRenamed(_ name: [UInt8]) {
        if let entry = pending[name], !entry.renamed { pending[name] = nil }
    }

    /// The inbox went away: whatever comes back is found by a rescan.
    public mutating func removeAll() {
        pending.removeAll()
        arrivals.removeAll()
    }

    /// Walks the due names from the oldest while `more()` holds, handing each to
    /// `decide`; names not yet due, or told to wait, keep their place in line.
    public mutating func visitDue(now: UInt64, while more: () -> Bool,
                                  _ decide: ([UInt8], inout Entry) -> Decision) {
        var index = 0
        var kept: [[UInt8]] = []
        while index < arrivals.count && more() {
            let name = arrivals[index]
            index += 1
            guard var entry = pending[name] else { continue }  // taken or vanished
            guard now >= entry.due else {
                kept.append(name)
                continue
            }
            switch decide(name, &entry) {
            case .waitUntil(let due):
                entry.due = due
                pending[name] = entry
                kept.append(name)
            case .done:
                pending[name] = nil
            }
        }
        arrivals.replaceSubrange(0..<index, with: kept)
        if pending.isEmpty { arrivals.removeAll(keepingCapacity: true) }
    }

    private mutating func add(_ name: [UInt8], _ entry: Entry) {
        pending[name] = entry
        arrivals.append(name)
    }
}

extension InboxTracker {
    /// What becomes of a due name once its completion check has answered.
    enum Step: Equatable {
        /// It vanished: no longer waiting.
        case forget
        /// A writer still holds it: look again at this time.
        case look(at: UInt64)
        /// Claim it; `overdue`: a writer still holds it, but it has waited long enough.
        case claim(overdue: Bool)
    }

    /// The rule for a due name: a vanished name is forgotten; one a writer still
    /// holds is looked at again a settle interval later, until `maxWait` has
    /// passed since it was first seen (later events do not restart that wait),
    /// when it is taken as it is.
    static func step(after readiness: CompletionCheck.Readiness, _ entry: Entry, now: UInt64, settle: UInt64,
                     maxWait: UInt64) -> Step {
        switch readiness {
        case .vanished:
            return .forget
        case .ready, .notRegular:
            return .claim(overdue: false)
        case .renameInProgress:
            // The unlink of the temporary name follows the link at once.
            let (deadline, overflow) = entry.firstSeen.addingReportingOverflow(maxWait)
            return !overflow && now >= deadline ? .claim(overdue: true) : .look(at: now + min(settle, 50_000_000))
        case .writerActive:
            let (deadline, overflow) = entry.firstSeen.addingReportingOverflow(maxWait)
            return !overflow && now >= deadline ? .claim(overdue: true) : .look(at: now + settle)
        }
    }

    /// When a name whose claim failed (a full disk, say) is looked at again:
    /// a second, then a settle interval later.
    static func afterFailedClaim(now: UInt64, settle: UInt64) -> UInt64 {
        now + 1_000_000_000 + settle
    }
}
