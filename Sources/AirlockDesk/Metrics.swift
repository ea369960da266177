import AirlockConfiguration
import AirlockDecoders
import AirlockEvents
import AirlockJournal
import AirlockPolicy
import AirlockSystem
import Foundation
import Synchronization

/// The daemon's counters, written as Prometheus text (the node_exporter textfile
/// collector convention: a temporary file, fsync, rename into place).
public final class Metrics: Sendable {
    private struct Counters: Sendable {
        var drops: [String: Int64] = [:]          // outcome → count
        var rejections: [String: Int64] = [:]     // reason → count
        var root: RootGauges?
        var bytesIn: Int64 = 0
        var bytesOut: Int64 = 0
        var durationBuckets = [Int64](repeating: 0, count: Metrics.bounds.count)
        var durationSum: Double = 0
        var durationCount: Int64 = 0
        var decoderFailures: Int64 = 0
        var deferredRetries: Int64 = 0
        var queueDepth: Int64 = 0
        var publish: PublishLag?
    }

    private let counters = Mutex(Counters())

    static let bounds: [Double] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

    /// In a fleet, the instance whose counters these are: every sample carries it
    /// as `airlock_instance` (Prometheus sums the instances' files), and the file's
    /// name carries it too, so instances sharing `metrics.path` write beside each other.
    let instance: String?

    public init(instance: String? = nil) {
        self.instance = instance
    }

    public func record(_ outcome: DropOutcome) {
        counters.withLock { counters in
            let key: String
            switch outcome.verdict {
            case .accepted(_, _, let bytes):
                key = "accepted"
                counters.bytesOut += bytes
            case .rejected(let rejection):
                key = "rejected"
                counters.rejections[rejection.reason.rawValue, default: 0] += 1
                if rejection.reason == .decoderFailed { counters.decoderFailures += 1 }
            case .deferred:
                key = "deferred"
                counters.deferredRetries += 1
            }
            counters.drops[key, default: 0] += 1
            counters.bytesIn += outcome.size ?? 0
            for (index, bound) in Metrics.bounds.enumerated() where outcome.seconds <= bound { counters.durationBuckets[index] += 1 }
            counters.durationSum += outcome.seconds
            counters.durationCount += 1
        }
    }

    public func setQueueDepth(_ depth: Int) {
        counters.withLock { $0.queueDepth = Int64(depth) }
    }

    /// The publisher's lag as last measured; nil (no publish.nats) leaves it out.
    public func setPublish(_ lag: PublishLag?) {
        counters.withLock { $0.publish = lag }
    }

    /// The root's state as last measured, for the gauges; nil leaves them out.
    public func setRoot(_ gauges: RootGauges?) {
        counters.withLock { $0.root = gauges }
    }

    /// The exposition text. Names follow Prometheus' conventions (base units,
    /// `_total` for counters) and no sample carries an empty label.
    public func text() -> String {
        let counters = self.counters.withLock { $0 }
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
        }
        family("airlock_drops_total", "counter", "Drops finished, by outcome.")
        for outcome in ["accepted", "rejected", "deferred"] {
            lines.append("airlock_drops_total{outcome=\"\(outcome)\"} \(counters.drops[outcome] ?? 0)")
        }
        family("airlock_rejections_total", "counter", "Drops rejected, by reason code.")
        for reason in counters.rejections.keys.sorted() {
            lines.append("airlock_rejections_total{reason=\"\(Metrics.escape(reason))\"} \(counters.rejections[reason]!)")
        }
        family("airlock_received_bytes_total", "counter", "Bytes of drops taken in.")
        lines.append("airlock_received_bytes_total \(counters.bytesIn)")
        family("airlock_outbox_written_bytes_total", "counter", "Bytes written to the outbox.")
        lines.append("airlock_outbox_written_bytes_total \(counters.bytesOut)")
        family("airlock_processing_seconds", "histogram", "Time from claim to verdict.")
        for (index, bound) in Metrics.bounds.enumerated() {
            lines.append("airlock_processing_seconds_bucket{le=\"\(Metrics.number(bound))\"} \(counters.durationBuckets[index])")
        }
        lines.append("airlock_processing_seconds_bucket{le=\"+Inf\"} \(counters.durationCount)")
        lines.append("airlock_processing_seconds_sum \(Metrics.number(counters.durationSum))")
        lines.append("airlock_processing_seconds_count \(counters.durationCount)")
        family("airlock_queue_depth", "gauge", "Drops claimed and waiting for, or in, a decoder.")
        lines.append("airlock_queue_depth \(counters.queueDepth)")
        lines += ScanHealth.shared.metricLines
        family("airlock_decoder_failures_total", "counter", "Drops rejected because the decoder crashed, hit a limit or timed out.")
        lines.append("airlock_decoder_failures_total \(counters.decoderFailures)")
        family("airlock_deferred_retries_total", "counter", "Drops deferred (disk full, permissions) and retried later.")
        lines.append("airlock_deferred_retries_total \(counters.deferredRetries)")
        if let confinement = DecoderConfinementState.current {
            family("airlock_decoder_confinement", "gauge",
                   "1 for each mechanism's state as decoders last found it (in-force, not-offered, refused).")
            for (mechanism, state) in [("landlock", confinement.landlock), ("seccomp", confinement.seccomp)] {
                lines.append("airlock_decoder_confinement{mechanism=\"\(mechanism)\",state=\"\(Metrics.escape(state))\"} 1")
            }
            family("airlock_decoders_withheld", "gauge", "1 while no decoder runs because confinement is required and refused.")
            lines.append("airlock_decoders_withheld \(confinement.withholdsDecoding ? 1 : 0)")
        }
        family("airlock_unconfined_deferrals_total", "counter", "Drops deferred because decoders could not be confined.")
        lines.append("airlock_unconfined_deferrals_total \(DecoderConfinementState.withheldDrops)")
        lines += Metrics.stateLines(counters.root)
        if let publish = counters.publish {
            // Counted by the daemon from the journal and the publisher's file, so the lag
            // still grows while the publisher is down.
            family("airlock_publish_lag_records", "gauge", "Journal records of a published kind after the publisher's cursor.")
            lines.append("airlock_publish_lag_records \(publish.records)")
            family("airlock_publish_failures_total", "counter", "Failed attempts of the publisher to connect or publish.")
            lines.append("airlock_publish_failures_total \(publish.progress?.failures ?? 0)")
            family("airlock_publish_published_total", "counter", "Records the publisher has had acknowledged by JetStream.")
            lines.append("airlock_publish_published_total \(publish.progress?.published ?? 0)")
        }
        return Metrics.labelled(lines, instance: instance).joined(separator: "\n") + "\n"
    }

    /// `lines` with `airlock_instance="NAME"` added to every sample (comments kept).
    static func labelled(_ lines: [String], instance: String?) -> [String] {
        guard let instance else { return lines }
        let label = "airlock_instance=\"\(escape(instance))\""
        return lines.map { line in
            guard !line.hasPrefix("#"), let end = line.firstIndex(where: { $0 == "{" || $0 == " " }) else { return line }
            let name = line[..<end]
            return line[end] == "{" ? name + "{" + label + "," + line[line.index(after: end)...] : name + "{" + label + "}" + line[end...]
        }
    }

    /// The file an instance writes for `path`: `airlock.prom` becomes `airlock.NAME.prom`
    /// (`NAME` appended when the name has no `.prom`); the path itself for a single daemon.
    static func fileName(_ name: String, instance: String?) -> String {
        guard let instance else { return name }
        return name.hasSuffix(".prom") ? String(name.dropLast(5)) + "." + instance + ".prom" : name + "." + instance
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Writes the text to `path` (relative to the root unless absolute), atomically.
    public func write(to path: String, root: FileDescriptor) throws(SystemError) {
        let slash = path.lastIndex(of: "/")
        let directoryPath = slash.map { String(path[..<$0]) } ?? ""
        let name = Array(Metrics.fileName(slash.map { String(path[path.index(after: $0)...]) } ?? path, instance: instance).utf8)
        let directory: FileDescriptor
        if path.hasPrefix("/") {
            directory = try FileDescriptor.openDirectory(path: directoryPath.isEmpty ? "/" : directoryPath)
        } else {
            // Beneath the root, missing directories are made (0755: a collector running
            // as another user must reach the file).
            var current = try root.duplicate()
            for component in directoryPath.split(separator: "/") where !component.isEmpty {
                let next = try current.closeAfter { (fd) throws(SystemError) -> FileDescriptor in
                    do throws(SystemError) {
                        try fd.makeDirectory(Array(component.utf8), mode: 0o755)
                        let made = try fd.openDirectory(Array(component.utf8))
                        try made.changeMode(0o755)
                        return made
                    } catch where error.errno == .exists {
                        return try fd.openDirectory(Array(component.utf8))
                    }
                }
                current = next
            }
            directory = current
        }
        let ownedDirectory = OwnedDescriptor(directory)
        // 0644 whatever the umask (the unit's is 0077): the collector reads it as another
        // user. The directory is not fsynced: the file is rewritten every interval, and
        // a stop that loses the rename leaves the previous, complete file.
        try ownedDirectory.descriptor.replaceAtomically(name, with: Array(text().utf8), temporary: Array(".".utf8) + name + Array(".tmp".utf8),
                                        .init(mode: 0o644, ignoresUmask: true, syncsDirectory: false))
    }
}
