import AirlockConfiguration
import AirlockDecoders
import AirlockDesk
import Foundation

/// `status --json`: one definition of the document's fields, encoded with its
/// keys sorted.
struct StatusDocument: Encodable {
    struct Daemon: Encodable {
        let running: Bool
        let pid: Int?
        let started_at: String?
        let mode: String?
    }

    struct Counts: Encodable {
        let accepted: Int
        let rejected: Int
        let deferred: Int
        let by_reason: [String: Int]

        init(_ counts: Status.Counts) {
            accepted = counts.accepted
            rejected = counts.rejected
            deferred = counts.deferred
            by_reason = counts.byReason
        }
    }

    struct Waiting: Encodable {
        let drop: String
        let age_seconds: Int64
    }

    struct Stuck: Encodable {
        let drop: String
        let detail: String
        let since: String
    }

    struct LongClaim: Encodable {
        let id: String
        let drop: String
        let age_seconds: Int64
    }

    struct Quarantine: Encodable {
        let entries: Int64
        let bytes: Int64
    }

    struct Confinement: Encodable {
        let landlock_abi: Int
        let landlock: Bool
        let seccomp: Bool
        let landlock_state: String
        let seccomp_state: String
        let decoders_withheld: Bool
    }

    struct DecoderStart: Encodable {
        let failing: Bool
        let since: String
        let detail: String
    }

    struct DaemonConfinement: Encodable {
        let landlock_state: String
        let seccomp_state: String
        let problems: String
        let decoders_withheld: Bool
    }

    /// How far the publisher is behind (`airlock publish`), when publish.nats is set.
    struct Publish: Encodable {
        let lag_records: Int
        let published: Int64?
        let failures: Int64?
        let last_error: String?
        let publisher_updated: String?
        let problem: String?
    }

    struct Temporary: Encodable {
        let count: Int64
        let oldest: String?
        let oldest_age_seconds: Int64
        let remove_after_seconds: Int64
    }

    struct Content: Encodable {
        let content_classes: String
        let type_detection: String
        let scanning: String
    }

    let daemon: Daemon
    /// A fleet's instances; left out for a single daemon's root.
    let instances: [FleetStatus.Instance]?
    let totals: Counts
    let claimed: Int
    let inbox_waiting: Int
    let free_bytes: UInt64
    let since_start: Counts?
    let oldest_waiting: Waiting?
    let stuck: [Stuck]
    let long_claims: [LongClaim]
    let quarantine: Quarantine
    let confinement: Confinement?
    let daemon_confinement: DaemonConfinement?
    /// Present while the intake cannot start decoder children.
    var decoder_start: DecoderStart?
    let content: Content
    let publish: Publish?
    let inbox_temporary: Temporary
    let completion: String

    init(_ status: Status, confinement found: Doctor.Findings?, daemon recorded: DecoderConfinementState?, content: ContentHealth,
         configuration: Configuration) {
        let abandoned = status.quarantine.abandoned
        inbox_temporary = Temporary(count: abandoned.count, oldest: abandoned.oldestName, oldest_age_seconds: abandoned.oldestSeconds,
                                    remove_after_seconds: configuration.watch.abandonedRemoveSeconds)
        completion = configuration.watch.completion.rawValue
        daemon = Daemon(running: status.holder.running, pid: status.holder.pid, started_at: status.holder.startedAt, mode: status.holder.mode)
        instances = status.instances.isEmpty ? nil : status.instances.map { FleetStatus.Instance($0.record, running: $0.running) }
        totals = Counts(status.total)
        claimed = status.claimed
        inbox_waiting = status.waiting
        free_bytes = status.freeBytes
        since_start = status.sinceStart.map(Counts.init)
        oldest_waiting = status.oldestWaiting.map { Waiting(drop: $0.name, age_seconds: $0.seconds) }
        stuck = status.stuck.map { Stuck(drop: $0.name, detail: $0.detail, since: $0.since) }
        long_claims = status.longClaims.map { LongClaim(id: $0.id, drop: $0.drop, age_seconds: $0.ageSeconds) }
        quarantine = Quarantine(entries: status.quarantine.quarantineEntries, bytes: status.quarantine.quarantineBytes)
        confinement = found.map {
            Confinement(landlock_abi: $0.landlockABI, landlock: $0.landlock, seccomp: $0.seccomp, landlock_state: $0.confinement.landlock,
                        seccomp_state: $0.confinement.seccomp, decoders_withheld: $0.confinement.withholdsDecoding)
        }
        daemon_confinement = recorded.map {
            DaemonConfinement(landlock_state: $0.landlock, seccomp_state: $0.seccomp, problems: $0.problems,
                              decoders_withheld: $0.withholdsDecoding)
        }
        self.content = Content(content_classes: content.classes, type_detection: content.types, scanning: content.scanning)
        publish = status.publish.map {
            Publish(lag_records: $0.records, published: $0.progress?.published, failures: $0.progress?.failures,
                    last_error: $0.progress?.lastError, publisher_updated: $0.progress?.updated, problem: $0.problem)
        }
    }

    /// The document on one line, keys sorted.
    var line: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}
