import AirlockConfiguration
import AirlockDecoders
import AirlockDesk
import AirlockEvents
import AirlockPolicy
import AirlockQuarantine
import AirlockRoot
import AirlockSystem
import AirlockText
import Foundation

/// The operator's commands: quarantine list/show/release/purge, history, status.
enum Operations {
    static let log = Log()
    static let out = EventStream()

    /// Writes `text` for a person to read, with every invisible scalar a name could
    /// carry (a right-to-left override, a zero-width space) escaped: see DisplayText.
    static func say(_ text: String) {
        print(DisplayText.escaping(text))
    }

    /// Rows in columns aligned by display width, so wide (CJK) names keep them in line;
    /// invisible scalars are escaped first, so the widths are those shown.
    static func table(_ unescaped: [[String]]) -> String {
        let rows = unescaped.map { $0.map(DisplayText.escaping) }
        var widths = [Int](repeating: 0, count: rows.first?.count ?? 0)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], displayWidth(cell)) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : padded(cell, toColumns: widths[index])
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    static func show(_ layout: RootLayout, _ configuration: Configuration, id: String, json: Bool) -> Int32 {
        let desk = QuarantineDesk(layout: layout, configuration: configuration)
        let entry: QuarantineDesk.Entry
        do {
            entry = try desk.entry(id)
        } catch let refusal as QuarantineDesk.Refusal {
            log.error(refusal.description)
            return ExitStatus.dataError
        } catch {
            log.error("cannot read \(id): \(error)")
            return ExitStatus.ioError
        }
        if json {
            out.emit(entry.report.line(holdsDrop: entry.holdsDrop))
            return ExitStatus.ok
        }
        let report = entry.report
        var lines = [
            "id:             \(entry.id)",
            "drop:           \(report.drop) (\(report.size.map(String.init) ?? "-") bytes)",
            "sha256:         \(report.sha256 ?? "-")",
            "format:         \(report.format ?? "-")",
            "reason:         \(report.reason)",
            "detail:         \(report.detail)",
            "entry:          \(report.entry ?? "-")\(report.entry_index.map { " (index \($0))" } ?? "")"
                + (report.other_entry.map { ", against \($0)" } ?? ""),
            "bytes written:  \(report.bytes_written)",
            "received:       \(report.received_at)",
            "decided:        \(report.decided_at)",
            "airlock:        \(report.airlock_version)",
            "original:       \(entry.holdsDrop ? "quarantine/\(entry.id)/drop" : "gone (released)")",
            "policy:         " + report.policy.text,
        ]
        for event in entry.history {
            lines.append("history:        \(event.action) at \(event.at) \(event.to ?? "")")
        }
        say(lines.joined(separator: "\n"))
        return ExitStatus.ok
    }

    static func release(_ layout: RootLayout, _ configuration: Configuration, id: String, by analyst: Analyst, note: String?) -> Int32 {
        do {
            let name = try QuarantineDesk(layout: layout, configuration: configuration).release(id, by: analyst.name, note: note)
            log.info("\(analyst.name) released \(id) into inbox/\(EscapedName(name)); it goes through intake again")
            return ExitStatus.ok
        } catch let refusal as QuarantineDesk.Refusal {
            log.error(refusal.description)
            return ExitStatus.dataError
        } catch {
            log.error("cannot release \(id): \(error)")
            return ExitStatus.ioError
        }
    }

    static func purge(_ layout: RootLayout, _ configuration: Configuration, ids: [String], olderThanSeconds: Int64?, dryRun: Bool,
                      reason: String?, by analyst: Analyst) -> Int32 {
        let desk = QuarantineDesk(layout: layout, configuration: configuration)
        do {
            var chosen: [QuarantineDesk.Entry]
            if !ids.isEmpty {
                // Every id is checked before any entry is removed: a typo purges nothing.
                chosen = try ids.map { try desk.entry($0) }
                chosen = chosen.enumerated().filter { index, entry in !chosen[..<index].contains { $0.id == entry.id } }.map(\.element)
            } else {
                let cutoff = Date().addingTimeInterval(-TimeInterval(olderThanSeconds ?? 0))
                chosen = try desk.entries().filter { ($0.date ?? .distantFuture) < cutoff }
            }
            for entry in chosen { log.info("\(dryRun ? "would purge" : "purging") \(entry.id) (\(entry.drop), \(entry.reason))") }
            if !dryRun { try desk.purge(chosen, note: reason, by: analyst.name) }
            log.info("\(chosen.count) \(chosen.count == 1 ? "entry" : "entries") \(dryRun ? "would be " : "")purged")
            return ExitStatus.ok
        } catch let refusal as QuarantineDesk.Refusal {
            log.error(refusal.description)
            return ExitStatus.dataError
        } catch {
            log.error("cannot purge: \(error)")
            return ExitStatus.ioError
        }
    }

    static func status(_ layout: RootLayout, _ configuration: Configuration, json: Bool) -> Int32 {
        let status: Status
        do {
            status = try Status.gather(layout, configuration: configuration)
        } catch {
            log.error("cannot read the root: \(error)")
            return ExitStatus.ioError
        }
        var confinement: Doctor.Findings?
        if let directory = DecoderLocation.directory() {
            confinement = try? Doctor(configuration: configuration, decoderDirectory: directory).probe()
        }
        if json {
            var document = StatusDocument(status, confinement: confinement, daemon: DecoderConfinementState.recorded(in: layout.state),
                                          content: ContentHealth.check(configuration), configuration: configuration)
            document.decoder_start = DecoderStartHealth.recorded(in: layout.state).map {
                StatusDocument.DecoderStart(failing: true, since: $0.since, detail: $0.detail)
            }
            out.emit(document.line)
            return ExitStatus.ok
        }
        say(statusLines(status, layout, configuration, confinement: confinement).joined(separator: "\n"))
        return ExitStatus.ok
    }

    /// The inbox's temporary names: how many, the oldest, and whether they are removed.
    static func temporaryLine(_ abandoned: AbandonedUploads, _ configuration: Configuration) -> String {
        var text = "\(abandoned.count) under temporary names (uploads in progress or abandoned)"
        if let name = abandoned.oldestName { text += "; oldest \(name), last written \(abandoned.oldestSeconds) s ago" }
        let after = configuration.watch.abandonedRemoveSeconds
        return text + (after > 0 ? "; removed \(after) s after their last write" : "; never removed (watch.abandoned_remove_seconds)")
    }

    /// `status` for a person: one line per aspect, continuation lines indented.
    private static func statusLines(_ status: Status, _ layout: RootLayout, _ configuration: Configuration,
                                    confinement: Doctor.Findings?) -> [String] {
        let daemon: String
        if status.holder.running {
            daemon = "running (pid \(status.holder.pid.map(String.init) ?? "?"), \(status.holder.mode ?? "?"), since \(status.holder.startedAt ?? "?"))"
        } else if let pid = status.holder.pid {
            // The pid file outlives every run, clean or not: it says who ran last.
            let last = status.holder.mode == "once" ? "run --once" : status.holder.mode ?? "?"
            daemon = "not running (last: \(last), pid \(pid), started \(status.holder.startedAt ?? "?"))"
        } else {
            daemon = "not running"
        }
        var lines = ["daemon:        \(daemon)"] + status.instances.map { "instance:      " + FleetStatus.line($0.record, running: $0.running) }
        lines.append("total:         \(status.total.summary)")
        if let since = status.sinceStart { lines.append("since start:   \(since.summary)") }
        var queue = "\(status.claimed) claimed, \(status.waiting) waiting in the inbox"
        if let oldest = status.oldestWaiting { queue += "; oldest \(oldest.name), \(oldest.seconds) s" }
        lines.append("queue:         \(queue)")
        lines.append("temporary:     " + temporaryLine(status.quarantine.abandoned, configuration))
        lines.append("completion:    " + ProducerFileAccess.describe(configuration.watch.completion))
        for entry in status.stuck {
            lines.append("stuck:         \(entry.name): \(entry.detail) (since \(entry.since))")
        }
        for claim in status.longClaims {
            lines.append("stuck:         \(claim.drop): claimed \(claim.ageSeconds) s ago and not decided [\(claim.id)]")
        }
        lines.append("quarantine:    \(status.quarantine.quarantineEntries) entries, "
                     + ByteCountFormatter.string(fromByteCount: status.quarantine.quarantineBytes, countStyle: .binary))
        if let publish = status.publish { lines.append("publish:       \(publish.summary)") }
        lines.append("free space:    \(ByteCountFormatter.string(fromByteCount: Int64(status.freeBytes), countStyle: .binary)) on the root's filesystem")
        if let confinement {
            lines.append("confinement:   here: \(confinement.confinement.summary)")
        }
        if let daemon = DecoderConfinementState.recorded(in: layout.state) {
            lines.append("               intake last saw: \(daemon.summary)\(daemon.withholdsDecoding ? "; NO DECODER RUNS, drops wait deferred" : "")")
        }
        if let failing = DecoderStartHealth.recorded(in: layout.state) {
            lines.append("decoders:      CANNOT BE STARTED since \(failing.since): \(failing.detail); drops wait, claimed, and are retried")
        }
        let content = ContentHealth.check(configuration)
        lines += ["classes:       \(content.classes)", "types:         \(content.types)", "scanning:      \(content.scanning)"]
        return lines
    }
}
