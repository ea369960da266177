/// How `replaceAtomically` treats the file's mode and the directory.
public struct AtomicWriteOptions: Sendable {
    /// The mode the temporary file is created with (the umask applies).
    public var mode: FileMode
    /// Set `mode` again with fchmod(2) after creating, so the umask does not
    /// narrow it (a file another user must read).
    public var ignoresUmask: Bool
    /// fsync(2) the directory after the rename, so the new name survives a power
    /// cut. Without it only the file's bytes are durable: a stop may leave the
    /// previous version under the name (never a part of either).
    public var syncsDirectory: Bool
    /// fsync(2) the file before the rename, so the name never holds less than
    /// the whole new file. Without it (a note that the next write corrects) a
    /// power cut may leave the name on an empty or partial file, which its
    /// reader must take for no note at all; readers before the cut never see one.
    public var syncsFile: Bool
    /// The group the file is given (fchown) before it gets its name; nil: the
    /// writer's own.
    public var group: GroupID?

    public init(mode: FileMode, ignoresUmask: Bool = false, syncsDirectory: Bool = true, syncsFile: Bool = true, group: GroupID? = nil) {
        self.mode = mode
        self.ignoresUmask = ignoresUmask
        self.syncsDirectory = syncsDirectory
        self.syncsFile = syncsFile
        self.group = group
    }
}

extension FileDescriptor {
    /// Replaces `name` beneath this directory with `bytes` so that a reader sees
    /// the old file or the new one, never a part of one: the bytes go into
    /// `temporary` (a copy a stop left behind is removed first), which is written
    /// with O_EXCL | O_NOFOLLOW, fsynced (unless the options say otherwise) and
    /// renamed (renameat(2)) over `name`.
    ///
    /// - Parameter temporary: a private name in this directory, never one a
    ///   producer or consumer uses.
    /// - Throws: `SystemError` of the step that failed; `name` is then unchanged
    ///   (the temporary file may remain, and is removed by the next write).
    public func replaceAtomically(_ name: [UInt8], with bytes: [UInt8], temporary: [UInt8],
                                  _ options: AtomicWriteOptions) throws(SystemError) {
        try removeTree(temporary)
        try open(temporary, [.writeOnly, .create, .exclusive, .noFollow], mode: options.mode).closeAfter { (fd) throws(SystemError) in
            if let group = options.group { try fd.changeGroup(group) }
            if options.ignoresUmask { try fd.changeMode(options.mode) }
            try fd.writeAll(bytes)
            if options.syncsFile { try fd.sync() }
        }
        try rename(temporary, to: self, name)
        if options.syncsDirectory { try sync() }
    }
}
