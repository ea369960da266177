import AirlockRoot

/// What `status` says of each instance of a fleet.
enum FleetStatus {
    /// One instance in `status --json`.
    struct Instance: Encodable {
        let name: String
        let running: Bool
        let generation: UInt64
        let pid: Int?
        let host: String?
        let started_at: String?
        let commit_mode: String?
        let state: String
        let taken_over_by: String?
        let taken_over_at: String?

        init(_ record: InstanceRecord, running: Bool) {
            name = record.instance
            self.running = running
            generation = record.generation
            pid = record.pid
            host = record.host
            started_at = record.startedAt
            commit_mode = record.commitMode
            state = running ? "running" : record.state == "running" ? "stopped uncleanly" : record.state
            taken_over_by = record.takenOverBy
            taken_over_at = record.takenOverAt
        }
    }

    /// One instance in `status`, for a person.
    static func line(_ record: InstanceRecord, running: Bool) -> String {
        let shown = Instance(record, running: running)
        var text = "\(record.instance): \(shown.state), generation \(record.generation)"
        if let host = record.host, let pid = record.pid { text += ", pid \(pid) on \(host)" }
        if let commit = record.commitMode { text += ", commit by \(commit == "rename" ? "rename(2)" : "RENAME_NOREPLACE")" }
        if let by = record.takenOverBy { text += ", taken over by \(by) at \(record.takenOverAt ?? "?")" }
        return text
    }
}
