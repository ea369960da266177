import AirlockCore
import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation

/// The operator's commands: quarantine list/show/release/purge, history, status.
enum Operations {
    static let log = Log()
    static let out = EventStream()

    static func list(_ layout: RootLayout, _ configuration: Configuration, reason: String?, sinceSeconds: Int64?, json: Bool) -> Int32 {
        let desk = QuarantineDesk(layout: layout, configuration: configuration)
        var entries: [QuarantineDesk.Entry]
        do {
            entries = try desk.entries()
        } catch {
            log.error("cannot read the quarantine: \(error)")
            return ExitStatus.ioError
        }
        if let reason { entries = entries.filter { $0.reason == reason } }
        if let sinceSeconds {
            let cutoff = Date().addingTimeInterval(-TimeInterval(sinceSeconds))
            entries = entries.filter { ($0.date ?? .distantPast) >= cutoff }
        }
        if json {
            for entry in entries {
                var line = JSONObjectWriter()
                line.add("id", entry.id)
                line.add("decided_at", entry.decidedAt)
                line.add("drop", entry.drop)
                if let size = entry.size { line.add("size", size) }
                line.add("reason", entry.reason)
                if let offending = entry.entry { line.add("entry", offending) }
                line.add("released", entry.released)
                out.emit(line.text)
            }
            return ExitStatus.ok
        }
        let rows = [["ID", "TIME", "SIZE", "REASON", "DROP", "ENTRY"]] + entries.map { entry in
            [entry.id, String(entry.decidedAt.prefix(19)).replacingOccurrences(of: "T", with: " ") + (entry.decidedAt.hasSuffix("Z") ? " UTC" : ""),
             entry.size.map(String.init) ?? "-", entry.reason + (entry.released ? " (released)" : ""), entry.drop, entry.entry ?? ""]
        }
        print(table(rows))
        return ExitStatus.ok
    }

    /// Rows in columns aligned by display width, so wide (CJK) names keep them in line.
    static func table(_ rows: [[String]]) -> String {
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
        print(lines.joined(separator: "\n"))
        return ExitStatus.ok
    }

    static func release(_ layout: RootLayout, _ configuration: Configuration, id: String) -> Int32 {
        do {
            let name = try QuarantineDesk(layout: layout, configuration: configuration).release(id)
            log.info("released \(id) into inbox/\(EscapedName(name)); it goes through intake again")
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
                      reason: String?) -> Int32 {
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
            if !dryRun { try desk.purge(chosen, note: reason) }
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

    static func history(_ layout: RootLayout, _ configuration: Configuration, id: String?, json: Bool) -> Int32 {
        if let id, !QuarantineDesk.isWellFormed(id) {
            log.error("\"\(EscapedName(Array(id.utf8)))\" is not an id (they look like 20261129T112331Z-3a1b51fc)")
            return ExitStatus.dataError
        }
        let records: [JournalEntry]
        do {
            records = try Journal(state: layout.state, maxBytes: configuration.journalMaxBytes, keep: configuration.journalKeep).records()
                .filter { id == nil || $0.record.id == id }
        } catch {
            log.error("cannot read the journal: \(error)")
            return ExitStatus.ioError
        }
        for record in records {
            if json {
                out.emit(record.sortedLine)
            } else {
                let rest = record.record.fields.filter { $0.0 != .id }.sorted { $0.0.rawValue < $1.0.rawValue }
                    .map { "\($0.0.rawValue)=\($0.1)" }.joined(separator: " ")
                print("\(record.time)  \(record.record.event.padding(toLength: 9, withPad: " ", startingAt: 0))  \(record.record.id ?? "-")  \(rest)")
            }
        }
        return ExitStatus.ok
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
            out.emit(StatusDocument(status, confinement: confinement, daemon: DecoderConfinementState.recorded(in: layout.state),
                                    content: ContentHealth.check(configuration)).line)
            return ExitStatus.ok
        }
        print(statusLines(status, layout, configuration, confinement: confinement).joined(separator: "\n"))
        return ExitStatus.ok
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
        var lines = ["daemon:        \(daemon)", "total:         \(status.total.summary)"]
        if let since = status.sinceStart { lines.append("since start:   \(since.summary)") }
        var queue = "\(status.claimed) claimed, \(status.waiting) waiting in the inbox"
        if let oldest = status.oldestWaiting { queue += "; oldest \(oldest.name), \(oldest.seconds) s" }
        lines.append("queue:         \(queue)")
        for entry in status.stuck {
            lines.append("stuck:         \(entry.name): \(entry.detail) (since \(entry.since))")
        }
        for claim in status.longClaims {
            lines.append("stuck:         \(claim.drop): claimed \(claim.ageSeconds) s ago and not decided [\(claim.id)]")
        }
        lines.append("quarantine:    \(status.quarantine.quarantineEntries) entries, "
                     + ByteCountFormatter.string(fromByteCount: status.quarantine.quarantineBytes, countStyle: .binary))
        lines.append("free space:    \(ByteCountFormatter.string(fromByteCount: Int64(status.freeBytes), countStyle: .binary)) on the root's filesystem")
        if let confinement {
            lines.append("confinement:   here: \(confinement.confinement.summary)")
        }
        if let daemon = DecoderConfinementState.recorded(in: layout.state) {
            lines.append("               intake last saw: \(daemon.summary)\(daemon.withholdsDecoding ? "; NO DECODER RUNS, drops wait deferred" : "")")
        }
        let content = ContentHealth.check(configuration)
        lines += ["classes:       \(content.classes)", "types:         \(content.types)", "scanning:      \(content.scanning)"]
        return lines
    }
}
