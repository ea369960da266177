import AirlockConfiguration
import AirlockJournal
import AirlockPolicy
import AirlockQuarantine
import AirlockRoot
import AirlockSystem
import AirlockText
import Foundation

/// `quarantine list` and `history`: what the quarantine holds and what happened,
/// for a terminal or (with `--json`, one object per line) for the Cockpit page.
extension Operations {
    static func list(_ layout: RootLayout, _ configuration: Configuration, _ query: QuarantineQuery, json: Bool) -> Int32 {
        let desk = QuarantineDesk(layout: layout, configuration: configuration)
        let page: [QuarantineDesk.Summary]
        do {
            page = try desk.summaries(query)
        } catch {
            log.error("cannot read the quarantine: \(error)")
            return ExitStatus.ioError
        }
        if json {
            for entry in page { out.emit(entry.jsonText) }
            return ExitStatus.ok
        }
        let rows = [["ID", "TIME", "SIZE", "REASON", "DROP", "ENTRY"]] + page.map { entry in
            [entry.id, String(entry.decidedAt.prefix(19)).replacingOccurrences(of: "T", with: " ") + (entry.decidedAt.hasSuffix("Z") ? " UTC" : ""),
             entry.size.map(String.init) ?? "-", entry.reason + (entry.released ? " (released)" : ""), entry.drop, entry.entry ?? ""]
        }
        say(table(rows))
        return ExitStatus.ok
    }

    static func reindex(_ layout: RootLayout, _ configuration: Configuration) -> Int32 {
        do {
            let count = try QuarantineDesk(layout: layout, configuration: configuration).rebuildIndex()
            log.info("rebuilt state/quarantine.index: \(count) \(count == 1 ? "entry" : "entries")")
            return ExitStatus.ok
        } catch {
            log.error("cannot rebuild the quarantine index: \(error)")
            return ExitStatus.ioError
        }
    }

    static func history(_ layout: RootLayout, _ configuration: Configuration, _ query: HistoryQuery, json: Bool) -> Int32 {
        if let id = query.id, !QuarantineDesk.isWellFormed(id) {
            log.error("\"\(EscapedName(Array(id.utf8)))\" is not an id (they look like 20261129T112331Z-3a1b51fc)")
            return ExitStatus.dataError
        }
        let cutoff = query.sinceSeconds.map { Date().addingTimeInterval(-TimeInterval($0)).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
        let journal = Journal(state: layout.state, maxBytes: configuration.journalMaxBytes, keep: configuration.journalKeep)
        if query.perHour {
            do {
                for line in HourlyCounts(try journal.outlines(since: cutoff)).lines(json: json) { json ? out.emit(line) : say(line) }
            } catch {
                log.error("cannot read the journal: \(error)")
                return ExitStatus.ioError
            }
            return ExitStatus.ok
        }
        var records: [JournalEntry]
        do {
            if let limit = query.limit {
                records = try journal.newest(limit, since: cutoff, id: query.id)
            } else {
                records = try journal.records(since: cutoff).filter { query.id == nil || $0.record.id == query.id }
            }
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
                say("\(record.time)  \(record.record.event.padding(toLength: 9, withPad: " ", startingAt: 0))  \(record.record.id ?? "-")  \(rest)")
            }
        }
        return ExitStatus.ok
    }
}

/// `history --per-hour`: verdicts and operators' actions counted per UTC hour,
/// event and reason (rejections by their reason code, the rest with none).
struct HourlyCounts {
    struct Key: Hashable, Comparable {
        let hour: String
        let event: String
        let reason: String

        static func < (a: Key, b: Key) -> Bool { (a.hour, a.event, a.reason) < (b.hour, b.event, b.reason) }
    }

    var counts: [Key: Int] = [:]

    init(_ outlines: [JournalOutline]) {
        for outline in outlines where ["accepted", "rejected", "deferred", "released", "purged"].contains(outline.event) {
            // Journal times are UTC, `2026-12-01T12:34:56.789Z`: the hour is the first 13 characters.
            counts[Key(hour: String(outline.time.prefix(13)) + ":00Z", event: outline.event, reason: outline.reason ?? ""), default: 0] += 1
        }
    }

    func lines(json: Bool) -> [String] {
        counts.keys.sorted().map { key in
            let count = counts[key]!
            guard json else { return "\(key.hour)  \(key.event)  \(key.reason.isEmpty ? "-" : key.reason)  \(count)" }
            var line = JSONObjectWriter()
            line.add("count", Int64(count))
            line.add("event", key.event)
            line.add("hour", key.hour)
            if !key.reason.isEmpty { line.add("reason", key.reason) }
            return line.text
        }
    }
}
