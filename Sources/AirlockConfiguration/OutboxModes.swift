import AirlockSystem

/// The modes and group every outbox entry gets as it lands, whatever the umask
/// and whatever the decoder chose: set through descriptors on staging, by the
/// audit on each entry it has judged, before the commit makes it durable and
/// renames it into the outbox.
public struct OutboxModes: Sendable, Equatable {
    public var fileMode: FileMode
    public var directoryMode: FileMode
    /// nil: the supervisor's own group.
    public var group: GroupID?

    public init(fileMode: FileMode, directoryMode: FileMode, group: GroupID?) {
        self.fileMode = fileMode
        self.directoryMode = directoryMode
        self.group = group
    }

    /// Parses `outbox.file_mode` / `outbox.directory_mode`: octal text, owner
    /// rights kept (airlock must be able to remove what it wrote), nothing a
    /// consumer could write through, no special or execute bits on files.
    static func mode(_ text: String, _ setting: SettingDefinition, directory: Bool) throws(ConfigurationError) -> FileMode {
        let allowed: FileMode = directory ? 0o755 : 0o644
        let required: FileMode = directory ? 0o700 : 0o600
        guard text.count == 4, text.hasPrefix("0"), let value = FileMode(text, radix: 8),
              value & ~allowed == 0, value & required == required else {
            throw ConfigurationError(setting, "must be an octal mode of the form \"0\(directory ? "750" : "640")\" within \"0\(String(allowed, radix: 8))\" "
                + "keeping the owner's \"0\(String(required, radix: 8))\", got \"\(text)\"")
        }
        return value
    }

    /// The id of the group `name`, for `outbox.group`.
    static func groupID(_ name: String) throws(ConfigurationError) -> GroupID {
        guard let found = Accounts.group(named: name) else {
            throw ConfigurationError(.outboxGroup, "no group named \"\(name)\" (create it, e.g. groupadd \(name))")
        }
        return found
    }

    /// Gives one open directory the outbox's directory mode and group; with its
    /// fstat `status`, only what it does not have already.
    package func set(onDirectory directory: FileDescriptor, status: FileStatus? = nil) throws(SystemError) {
        try set(directory, mode: directoryMode, status: status)
    }

    /// Gives one open file the outbox's file mode and group; with its fstat
    /// `status`, only what it does not have already.
    package func set(on file: FileDescriptor, status: FileStatus? = nil) throws(SystemError) {
        try set(file, mode: fileMode, status: status)
    }

    private func set(_ fd: FileDescriptor, mode: FileMode, status: FileStatus?) throws(SystemError) {
        if let group, status?.group != group { try fd.changeGroup(group) }
        if status?.permissions != mode { try fd.changeMode(mode) }
    }
}

extension Configuration {
    /// The outbox section: modes and group of what lands, and the hand-back.
    mutating func readOutboxKeys(_ reader: inout ObjectReader) throws(ConfigurationError) {
        if let mode = try reader.string(.outboxFileMode), mode != "policy" {
            outboxFileMode = try OutboxModes.mode(mode, .outboxFileMode, directory: false)
        }
        if let mode = try reader.string(.outboxDirectoryMode), mode != "policy" {
            outboxDirectoryMode = try OutboxModes.mode(mode, .outboxDirectoryMode, directory: true)
        }
        if let group = try reader.string(.outboxGroup), !group.isEmpty {
            outboxGroup = group
            outboxGroupID = try OutboxModes.groupID(group)
        }
        if let groups = try reader.stringArray(.acknowledgingGroups) {
            acknowledgingGroups = try Acknowledgements.validated(groups)
        }
        if let rule = try reader.choice(.removeWhen) { removeWhenAllAcknowledge = rule == "all" }
    }
}
