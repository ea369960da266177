import AirlockConfiguration
import AirlockRoot
import AirlockSystem

/// Who besides airlock may read the event feed (`airlock events`): the consumers,
/// the group `outbox.group` names, and for nothing else of the root's private state.
///
/// The feed is the journal, kept in `state/` beside claims and staging. With a
/// consumers' group, `state/` is 0710 in that group: its members may pass through
/// it to open the journal files by their names (0640, that group) but not list it,
/// and every other entry there is airlock's alone (0700 directories, 0600 files),
/// so the journal is all they can read. Without a group `state/` is 0700 and the
/// journal 0600, as before. Whoever may read the feed sees every record: drop
/// names, uploaders, verdicts and reasons (what the consumers of outcomes need),
/// never a drop's bytes.
public struct FeedAccess: Sendable, Equatable {
    /// The consumers' group; nil: airlock alone.
    public let group: GroupID?

    public init(group: GroupID?) { self.group = group }

    var fileMode: FileMode { group == nil ? 0o600 : 0o640 }
    var stateMode: FileMode { group == nil ? 0o700 : 0o710 }

    /// Gives one journal file the feed's mode and group (fchown, then fchmod, on the
    /// open file: never by name).
    func grant(_ file: FileDescriptor) throws(SystemError) {
        if let group { try file.changeGroup(group) }
        try file.changeMode(fileMode)
    }

    /// Sets `state/` and every journal file now kept to this access, granting or
    /// revoking it (init and each start of the intake: a changed `outbox.group`
    /// takes effect then). The layout file, once 0644, is narrowed to 0600.
    public func apply(to layout: RootLayout, keep: Int) throws(SystemError) {
        let names = [Journal.current, JournalGenerations.fileName] + (1...keep).map(Journal.rotated)
        for name in names {
            do {
                try layout.state.open(name, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
                    guard try fd.status().kind == .regular else { return }
                    try grant(fd)
                }
            } catch where error.errno == .noEntry {
                continue
            }
        }
        do {
            try layout.state.open(Array(LayoutVersion.fileName.utf8), [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in
                try fd.changeMode(0o600)
            }
        } catch where error.errno == .noEntry {}
        if let group { try layout.state.changeGroup(group) }
        try layout.state.changeMode(stateMode)
        try applyToInstanceJournals(layout.state)
    }

    /// A fleet's `state/journal/`: readable and listable by the consumers' group
    /// (a reader of the feed finds the instances' journals by listing it), and
    /// every file in it as the root's own journal files.
    func applyToInstanceJournals(_ state: FileDescriptor) throws(SystemError) {
        let directory: FileDescriptor
        do {
            directory = try state.openDirectory(JournalFiles.fleetDirectory)
        } catch where error.errno == .noEntry {
            return
        }
        try directory.closeAfter { (directory) throws(SystemError) in
            for name in try directory.entryNames() {
                guard let fd = try? directory.open(name, [.readOnly, .noFollow, .nonBlocking]) else { continue }
                try fd.closeAfter { (fd) throws(SystemError) in
                    guard try fd.status().kind == .regular else { return }
                    try grant(fd)
                }
            }
            if let group { try directory.changeGroup(group) }
            try directory.changeMode(group == nil ? 0o700 : 0o750)
        }
    }
}

extension Configuration {
    /// Who may read the event feed: the outbox's group.
    public var feedAccess: FeedAccess { FeedAccess(group: outboxGroupID) }
}
