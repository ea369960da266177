import AirlockConfiguration
import AirlockDesk
import AirlockRoot
import AirlockSystem
import AirlockText

extension Operations {
    /// `outbox sweep`: removes the acknowledged entries, one log line each; reports
    /// every entry it could not remove and carries on. 0 when nothing failed, 74
    /// when an entry could not be removed, 77 or 74 when the outbox itself could
    /// not be read.
    static func sweep(_ layout: RootLayout, _ configuration: Configuration) -> Int32 {
        let groups = Acknowledgements.groups(configuration)
        if groups.isEmpty {
            log.warning("no acknowledging group is configured (outbox.acknowledging_groups, or outbox.group): "
                        + "only entries handed back by the previous layout's dot-names are removed")
        }
        let report: OutboxSweep.Report
        do {
            report = try OutboxSweep(layout: layout, configuration: configuration).run()
        } catch {
            log.error("outbox sweep: \(error)")
            return error.errno == .permissionDenied || error.errno == .notPermitted ? ExitStatus.noPermission : ExitStatus.ioError
        }
        for (name, id) in report.removed {
            log.info("removed outbox/\(EscapedName(name))" + (id.isEmpty ? " (handed back by renaming)" : " [\(id)], acknowledged"))
        }
        for (group, id) in report.early {
            log.warning("the acknowledgement acks/\(EscapedName(Array(group.utf8)))/\(EscapedName(Array(id.utf8))) did not change after "
                        + "its entry landed: ignored (acknowledge again, after processing the entry)")
        }
        for (name, reason) in report.failed {
            log.error("outbox/\(EscapedName(name)) could not be removed: \(reason)")
        }
        log.info("outbox sweep: removed \(report.removed.count), \(report.waiting) waiting for acknowledgement"
                 + (report.failed.isEmpty ? "" : ", \(report.failed.count) could not be removed"))
        return report.failed.isEmpty ? ExitStatus.ok : ExitStatus.ioError
    }
}
