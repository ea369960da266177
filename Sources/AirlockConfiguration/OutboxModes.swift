import AirlockSystem

/// The modes and group every outbox entry gets as it lands, whatever the umask
/// and whatever the decoder chose: set through descriptors on staging, after the
/// audit and before the commit makes it durable and renames it into the outbox.
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
    static func mode(_ text: String, key: String, directory: Bool) throws(ConfigurationError) -> FileMode {
        let allowed: FileMode = directory ? 0o755 : 0o644
        let required: FileMode = directory ? 0o700 : 0o600
        guard text.count == 4, text.hasPrefix("0"), let value = FileMode(text, radix: 8),
              value & ~allowed == 0, value & required == required else {
            throw ConfigurationError("\(key): must be an octal mode of the form \"0\(directory ? "750" : "640")\" within \"0\(String(allowed, radix: 8))\" "
                + "keeping the owner's \"0\(String(required, radix: 8))\", got \"\(text)\"")
        }
        return value
    }

    /// The id of the group `name`, for `outbox.group`.
    static func groupID(_ name: String) throws(ConfigurationError) -> GroupID {
        guard let found = Accounts.group(named: name) else {
            throw ConfigurationError("outbox.group: no group named \"\(name)\" (create it, e.g. groupadd \(name))")
        }
        return found
    }

    /// Sets the modes and group on `directory` and everything beneath it (the
    /// audit has checked it holds only directories and regular files), and hands
    /// each directory's regular files, once set, to `eachDirectory` with the
    /// directory's path beneath `directory`: the manifest hashes the files on
    /// this walk rather than on one of its own.
    ///
    /// - Parameter fsyncEach: fsync every entry after the change, for
    ///   `commit.sync: "fsync"`, where the audit's fsyncs came before it (with
    ///   syncfs the commit's one syncfs covers it).
    package func apply(to directory: FileDescriptor, fsyncEach: Bool = false, eachDirectory: DirectoryVisit) throws(SystemError) {
        try apply(to: directory, path: [], fsyncEach: fsyncEach, depthLimit: 256, eachDirectory: eachDirectory)
    }

    /// A directory's path beneath the top, the directory, and its regular files.
    package typealias DirectoryVisit = (_ path: [UInt8], _ directory: FileDescriptor,
                                _ regular: [(name: [UInt8], status: FileStatus)]) throws(SystemError) -> Void

    private func apply(to directory: FileDescriptor, path: [UInt8], fsyncEach: Bool, depthLimit: Int,
                       eachDirectory: DirectoryVisit) throws(SystemError) {
        if let group { try directory.changeGroup(group) }
        try directory.changeMode(directoryMode)
        var regular: [(name: [UInt8], status: FileStatus)] = []
        for name in try directory.entryNames() {
            let status = try directory.status(of: name)
            switch status.kind {
            case .directory:
                guard depthLimit > 0 else { throw SystemError("outbox modes", name, .tooManyLinks) }
                let inner = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
                try directory.openDirectory(name).closeAfter { (child) throws(SystemError) in
                    try apply(to: child, path: inner, fsyncEach: fsyncEach, depthLimit: depthLimit - 1, eachDirectory: eachDirectory)
                }
            case .regular:
                try directory.open(name, [.readOnly, .noFollow, .nonBlocking, .noControllingTerminal]).closeAfter { (file) throws(SystemError) in
                    try set(on: file)
                    if fsyncEach { try file.sync() }
                }
                regular.append((name, status))
            default:
                throw SystemError("outbox modes", name, .notPermitted)
            }
        }
        try eachDirectory(path, directory, regular)
        if fsyncEach { try directory.sync() }
    }

    /// Gives one open file the outbox's file mode and group.
    package func set(on file: FileDescriptor) throws(SystemError) {
        if let group { try file.changeGroup(group) }
        try file.changeMode(fileMode)
    }
}

extension Configuration {
    /// The outbox section: modes and group of what lands, and the hand-back.
    mutating func readOutboxKeys(_ reader: inout ObjectReader) throws(ConfigurationError) {
        if let mode = try reader.string("file_mode"), mode != "policy" {
            outboxFileMode = try OutboxModes.mode(mode, key: "outbox.file_mode", directory: false)
        }
        if let mode = try reader.string("directory_mode"), mode != "policy" {
            outboxDirectoryMode = try OutboxModes.mode(mode, key: "outbox.directory_mode", directory: true)
        }
        if let group = try reader.string("group"), !group.isEmpty {
            outboxGroup = group
            outboxGroupID = try OutboxModes.groupID(group)
        }
        if let groups = try reader.stringArray("acknowledging_groups") {
            acknowledgingGroups = try Acknowledgements.validated(groups)
        }
        if let rule = try reader.choice("outbox.remove_when") { removeWhenAllAcknowledge = rule == "all" }
    }
}
