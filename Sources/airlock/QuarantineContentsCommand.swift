import AirlockConfiguration
import AirlockDesk
import AirlockPolicy
import AirlockQuarantine
import AirlockRoot
import AirlockSystem
import AirlockText
import Foundation

extension Operations {
    /// `quarantine contents ID`: the archive's entries as a table (TYPE, SIZE,
    /// NAME) or as JSON lines, and what stopped the listing early, if anything.
    static func contents(_ layout: RootLayout, _ configuration: Configuration, id: String, json: Bool, decoderDirectory: String) -> Int32 {
        let listing: QuarantineContents.Listing
        do {
            listing = try QuarantineContents(layout: layout, configuration: configuration, decoderDirectory: decoderDirectory).list(id)
        } catch let refusal as QuarantineDesk.Refusal {
            log.error(refusal.description)
            return ExitStatus.dataError
        } catch {
            log.error("cannot list \(id): \(error)")
            return ExitStatus.ioError
        }
        if json {
            for entry in listing.entries { out.emit(entry.jsonText) }
        } else {
            let rows = [["TYPE", "SIZE", "NAME"]] + listing.entries.map { entry in
                [entry.entryType, entry.entrySize.map { "\($0)" } ?? "-",
                 entry.entry + (entry.linkTarget.map { " -> " + $0 } ?? "") + (entry.encrypted ? " (encrypted)" : "")]
            }
            say(table(rows))
            say("\(listing.entryCount) \(listing.entryCount == 1 ? "entry" : "entries") in this \(listing.format) archive")
        }
        if listing.truncated {
            log.warning("only the first \(listing.entries.count) of \(listing.entryCount) entries are listed")
        }
        if let detail = listing.detail {
            log.warning("the listing stops early: \(detail)")
        }
        return ExitStatus.ok
    }
}
