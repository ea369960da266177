import AirlockConfiguration
import AirlockDecoders
import AirlockEvents
import AirlockIntake
import AirlockJournal
import AirlockRoot
import AirlockSystem
import Synchronization

/// What the metrics report about the root as it is now, measured from the
/// directories when the metrics are written rather than counted as drops pass,
/// so that a restart, a purge or a consumer emptying the outbox cannot make the
/// numbers drift from what is on disk.
public struct RootGauges: Sendable, Equatable {
    public var quarantineEntries: Int64 = 0
    /// The bytes of the files quarantine entries hold (originals and reports).
    public var quarantineBytes: Int64 = 0
    public var claimedDrops: Int64 = 0
    /// Age of the oldest claim, by its directory's modification time; 0 with none.
    public var oldestClaimSeconds: Int64 = 0
    /// Age of the oldest inbox entry that is not a temporary name; 0 with none.
    public var oldestInboxSeconds: Int64 = 0
    public var freeBytes: Int64 = 0
    /// Temporary names in the inbox (uploads in progress or abandoned) and the oldest's age.
    public var abandoned = AbandonedUploads()

    public init() {}

    /// Measures `layout`; entries that vanish while being looked at are skipped.
    ///
    /// - Parameter quarantine: the quarantine's entries and bytes where they are
    ///   already known (the quarantine index, for status); nil: every entry is walked.
    public static func measure(_ layout: RootLayout, _ configuration: Configuration,
                               quarantine: (entries: Int64, bytes: Int64)? = nil) throws(SystemError) -> RootGauges {
        var gauges = RootGauges()
        let now = WallClock.seconds()
        func age(_ status: FileStatus) -> Int64 { max(0, now - status.modifiedSeconds) }
        if let quarantine {
            (gauges.quarantineEntries, gauges.quarantineBytes) = quarantine
        } else {
            for name in try layout.quarantine.entryNames() {
                guard let owned = try? OwnedDescriptor(layout.quarantine.openDirectory(name)) else { continue }
                let entry = owned.descriptor
                defer { withExtendedLifetime(owned) {} }
                gauges.quarantineEntries += 1
                for file in (try? entry.entryNames()) ?? [] {
                    if let status = try? entry.status(of: file), status.kind == .regular { gauges.quarantineBytes += status.size }
                }
            }
        }
        try layout.eachClaim { claimed, name in
            gauges.claimedDrops += 1
            if let status = try? claimed.status(of: name) { gauges.oldestClaimSeconds = max(gauges.oldestClaimSeconds, age(status)) }
        }
        if let opened = try layout.openInbox() {
            let owned = OwnedDescriptor(opened), inbox = owned.descriptor
            defer { withExtendedLifetime(owned) {} }
            for name in try inbox.entryNames() where !Intake.isTemporaryName(name, configuration) {
                if let status = try? inbox.status(of: name) { gauges.oldestInboxSeconds = max(gauges.oldestInboxSeconds, age(status)) }
            }
            gauges.abandoned = try AbandonedUploads.survey(inbox, configuration)
        }
        gauges.freeBytes = Int64(clamping: try layout.root.availableBytes())
        return gauges
    }
}

/// The supervisor's own confinement when it started, per mechanism (the
/// decoders' is `DecoderConfinementState`). Metrics expose both, as
/// `airlock_confinement_in_force{mechanism}`, so one alert covers them.
public enum ConfinementInForce {
    private static let state = Mutex<[String: Bool]>([:])

    public static func record(_ mechanism: String, _ inForce: Bool) {
        state.withLock { $0[mechanism] = inForce }
    }

    public static var current: [String: Bool] { state.withLock { $0 } }
}

extension Metrics {
    /// The gauges of the root's state, the confinement in force, the journal's
    /// write errors, the build and the time of writing.
    static func stateLines(_ root: RootGauges?) -> [String] {
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
        }
        func gauge(_ name: String, _ help: String, _ value: Int64) {
            family(name, "gauge", help)
            lines.append("\(name) \(value)")
        }
        if let root {
            gauge("airlock_quarantine_entries", "Entries in the quarantine.", root.quarantineEntries)
            gauge("airlock_quarantine_bytes", "Bytes of the files the quarantine holds.", root.quarantineBytes)
            gauge("airlock_claimed_drops", "Drops claimed and not yet decided, deferred ones included.", root.claimedDrops)
            gauge("airlock_oldest_claim_age_seconds", "Age of the oldest claim (0 with none).", root.oldestClaimSeconds)
            gauge("airlock_oldest_inbox_file_age_seconds", "Age of the oldest inbox entry, by its modification time (0 with none).",
                  root.oldestInboxSeconds)
            gauge("airlock_inbox_temporary_files", "Inbox entries under temporary names (\(SettingDefinition.watchIgnore.name)): uploads in progress or abandoned.",
                  root.abandoned.count)
            gauge("airlock_oldest_inbox_temporary_file_age_seconds",
                  "Age of the oldest inbox entry under a temporary name, by its modification time (0 with none).", root.abandoned.oldestSeconds)
            gauge("airlock_filesystem_free_bytes", "Bytes available to airlock on the root's filesystem.", root.freeBytes)
        }
        var confinement = ConfinementInForce.current
        if let decoder = DecoderConfinementState.current {
            confinement["decoder_landlock"] = decoder.landlock == "in-force"
            confinement["decoder_seccomp"] = decoder.seccomp == "in-force"
        }
        if !confinement.isEmpty {
            family("airlock_confinement_in_force", "gauge", "1 when the mechanism was in force when last applied, 0 when not.")
            for mechanism in confinement.keys.sorted() {
                lines.append("airlock_confinement_in_force{mechanism=\"\(mechanism)\"} \(confinement[mechanism]! ? 1 : 0)")
            }
        }
        family("airlock_journal_write_errors_total", "counter", "Claimed and deferred records the journal could not take (a drop whose verdict record cannot be written stays claimed instead).")
        lines.append("airlock_journal_write_errors_total \(JournalWriteErrors.total)")
        family("airlock_output_dropped_total", "counter",
               "Lines dropped because the reader of standard output (events) or standard error (log) did not keep up.")
        lines.append("airlock_output_dropped_total{stream=\"stdout\"} \(OutputBuffer.events.dropped)")
        lines.append("airlock_output_dropped_total{stream=\"stderr\"} \(OutputBuffer.log.dropped)")
        family("airlock_decoder_start_failures_total", "counter",
               "Decoder children that could not be started or never took their drop; each drop stays claimed and is retried.")
        lines.append("airlock_decoder_start_failures_total \(DecoderStartHealth.failures)")
        gauge("airlock_decoder_start_failing", "1 while decoder children cannot be started (drops wait, deferred), 0 otherwise.",
              DecoderStartHealth.failing ? 1 : 0)
        family("airlock_abandoned_uploads_removed_total", "counter",
               "Temporary inbox files removed as abandoned (\(NumericSetting.watchAbandonedRemoveSeconds.name)) since the daemon started.")
        lines.append("airlock_abandoned_uploads_removed_total \(AbandonedUploads.removedTotal)")
        family("airlock_build_info", "gauge", "Always 1; the labels say which airlock wrote the metrics.")
        lines.append("airlock_build_info{version=\"\(Metrics.escape(AirlockVersion.current))\"} 1")
        gauge("airlock_metrics_written_timestamp_seconds", "When the daemon wrote this file (Unix time); stale means the daemon is gone.",
              WallClock.seconds())
        return lines
    }
}
