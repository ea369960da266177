import AirlockIntake

/// Deferred drops waiting to be tried again, each after a delay that doubles
/// with every deferral of the same drop (1 s, 2 s, 4 s, ... up to a ceiling).
/// Pure state: the time is passed in.
struct RetryScheduler {
    private struct Retry {
        var due: UInt64
        var ticket: ClaimTicket
    }

    private var retries: [Retry] = []
    private var attempts: [String: Int] = [:]

    var count: Int { retries.count }
    var earliestDue: UInt64? { retries.lazy.map(\.due).min() }

    /// The drop was settled (accepted or rejected): its deferrals are forgotten.
    mutating func settled(_ id: String) {
        attempts[id] = nil
    }

    /// Schedules the drop again; returns the delay in seconds.
    mutating func deferred(_ ticket: ClaimTicket, now: UInt64, maxSeconds: Int64) -> Int64 {
        let attempt = (attempts[ticket.id] ?? 0) + 1
        attempts[ticket.id] = attempt
        let delay = min(Int64(1) << Int64(min(attempt - 1, 20)), maxSeconds)
        retries.append(Retry(due: now + UInt64(delay) * 1_000_000_000, ticket: ticket))
        return delay
    }

    /// Removes and returns up to `limit` retries that are due, the earliest first.
    mutating func takeDue(now: UInt64, limit: Int) -> [ClaimTicket] {
        guard limit > 0 else { return [] }
        retries.sort { $0.due < $1.due }
        var taken: [ClaimTicket] = []
        while taken.count < limit, let first = retries.first, first.due <= now {
            taken.append(retries.removeFirst().ticket)
        }
        return taken
    }
}
