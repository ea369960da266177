import AirlockCore
import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
            var report = entry.report
            report["holds_drop"] = entry.holdsDrop
            let data = (try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            out.emit(String(decoding: data, as: UTF8.self))
            return ExitStatus.ok
        }
        let report = entry.report
        func field(_ key: String) -> String {
            switch report[key] {
            case let text as String: return text
            case let number as NSNumber: return number.stringValue
            default: return "-"
            }
        }
        var lines = [
            "id:             \(entry.id)",
            "drop:           \(field("drop")) (\(field("size")) bytes)",
            "sha256:         \(field("sha256"))",
            "format:         \(field("format"))",
            "reason:         \(field("reason"))",
            "detail:         \(field("detail"))",
            "entry:          \(report["entry"] as? String ?? "-")\((report["entry_index"] as? NSNumber).map { " (index \($0))" } ?? "")"
                + ((report["other_entry"] as? String).map { ", against \($0)" } ?? ""),
            "bytes written:  \(field("bytes_written"))",
            "received:       \(field("received_at"))",
            "decided:        \(field("decided_at"))",
            "airlock:        \(field("airlock_version"))",
            "original:       \(entry.holdsDrop ? "quarantine/\(entry.id)/drop" : "gone (released)")",
        ]
        if let policy = report["policy"] as? [String: Any] {
            lines.append("policy:         " + policy.keys.sorted().map { "\($0)=\(policy[$0]!)" }.joined(separator: " "))
        }
        for event in entry.history {
            lines.append("history:        \(event["action"] as? String ?? "?") at \(event["at"] as? String ?? "?") \(event["to"] as? String ?? "")")
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
        let records: [[String: Any]]
        do {
            records = try Journal(state: layout.state, maxBytes: configuration.journalMaxBytes, keep: configuration.journalKeep).records()
                .filter { id == nil || $0["id"] as? String == id }
        } catch {
            log.error("cannot read the journal: \(error)")
            return ExitStatus.ioError
        }
        for record in records {
            if json {
                let data = (try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
                out.emit(String(decoding: data, as: UTF8.self))
            } else {
                let keys = record.keys.filter { !["time", "event", "id"].contains($0) }.sorted()
                let rest = keys.map { "\($0)=\(record[$0]!)" }.joined(separator: " ")
                print("\(record["time"] as? String ?? "?")  \((record["event"] as? String ?? "?").padding(toLength: 9, withPad: " ", startingAt: 0))  \(record["id"] as? String ?? "-")  \(rest)")
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
            var object: [String: Any] = [
                "daemon": ["running": status.holder.running, "pid": status.holder.pid as Any, "started_at": status.holder.startedAt as Any,
                           "mode": status.holder.mode as Any].compactMapValues { $0 is NSNull ? nil : $0 },
                "totals": status.total.json, "claimed": status.claimed, "inbox_waiting": status.waiting,
                "free_bytes": status.freeBytes,
            ]
            if let since = status.sinceStart { object["since_start"] = since.json }
            if let oldest = status.oldestWaiting { object["oldest_waiting"] = ["drop": oldest.name, "age_seconds": oldest.seconds] }
            object["stuck"] = status.stuck.map { ["drop": $0.name, "detail": $0.detail, "since": $0.since] }
            object["long_claims"] = status.longClaims.map { ["id": $0.id, "drop": $0.drop, "age_seconds": $0.ageSeconds] }
            object["quarantine"] = ["entries": status.quarantine.quarantineEntries, "bytes": status.quarantine.quarantineBytes]
            if let confinement {
                object["confinement"] = ["landlock_abi": confinement.landlockABI, "landlock": confinement.landlock, "seccomp": confinement.seccomp,
                                         "landlock_state": confinement.confinement.landlock, "seccomp_state": confinement.confinement.seccomp,
                                         "decoders_withheld": confinement.confinement.withholdsDecoding]
            }
            if let daemon = DecoderConfinementState.recorded(in: layout.state) {
                object["daemon_confinement"] = ["landlock_state": daemon.landlock, "seccomp_state": daemon.seccomp,
                                                "problems": daemon.problems, "decoders_withheld": daemon.withholdsDecoding]
            }
            let content = ContentHealth.check(configuration)
            object["content"] = ["type_detection": content.types, "scanning": content.scanning]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            out.emit(String(decoding: data, as: UTF8.self))
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
        lines += ["types:         \(content.types)", "scanning:      \(content.scanning)"]
        return lines
    }
}
