import AirlockPolicy
import AirlockSystem

/// Where extracted entries go: private staging, or nowhere (inspection, and the
/// rest of an archive after its first violation, which is still read so that the
/// verdict does not depend on entry order).
public protocol EntrySink {
    mutating func makeDirectory(_ path: EntryPath) throws(SystemError)
    /// Starts the file at `path`; `size` is what its archive declares, when it
    /// does (a hint only: the bytes written are what counts).
    mutating func beginFile(_ path: EntryPath, size: Int64?) throws(SystemError)
    mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError)
    mutating func endFile() throws(SystemError)
    /// Closes whatever is open; called on every path out of a scan.
    mutating func close()
}

/// Writes entries beneath the staging directory, one component at a time from
/// directory descriptors: O_NOFOLLOW on every open, O_EXCL on every file. Every
/// entry is created with the staged modes the request names (`Policy.stagedFileMode`,
/// `stagedDirectoryMode`: the outbox's, or 0600 and 0700), never with a mode from
/// the archive. The child's umask, 022 (see Confinement.apply), takes nothing
/// from modes within 0755, so each entry comes out with exactly that mode: the
/// supervisor's audit admits no other, and then needs no fchmod.
public struct StagingWriter: EntrySink {
    /// Directories kept open between entries, so entries spread over a few
    /// directories do not walk from the root each time. Bounded: the decoder's
    /// RLIMIT_NOFILE is small.
    private let directories: Root.Descent
    private static let openLimit = 24
    /// Directories this writer made (as paths), so a later entry walking into
    /// one does not try mkdirat again only to meet EEXIST.
    private var made: Set<[UInt8]> = []
    private var file: SharedDescriptor?
    private var fileName: [UInt8] = []
    /// The open file's path beneath the root, and what has been written to it.
    private var filePath: [UInt8] = []
    private var fileBytes: Int64 = 0
    /// Bytes written (to any file) since the last `WritingNotice`.
    private var unannounced: Int64 = 0

    /// Where this writer's notices go (a decoder child's result pipe), or nil for
    /// none: each closed file of at least `WrittenFileNotice.minimumBytes`, so the
    /// supervisor can hash it while the rest decodes, and every
    /// `WritingNotice.step` bytes written, so it can start putting them on disk.
    public var notices: FileDescriptor?

    public private(set) var filesWritten: Int64 = 0
    public private(set) var directoriesMade: Int64 = 0

    private let fileMode: FileMode
    private let directoryMode: FileMode
    /// Whether a file whose directories this writer has made is created with
    /// one openat2 from the root (false once the kernel or a filter refused it).
    private var opensBeneath = true

    /// Whether a large file's declared size is reserved when it is created
    /// (fallocate, keeping the size). On ext4 a buffered write otherwise reserves
    /// and maps each 4 KiB block as it comes (delayed allocation): five 18 MiB
    /// files took 17 to 24 ms of write calls and 67 to 80 ms to sync, against 10
    /// to 11 ms and 60 to 70 ms with their space reserved first. XFS gained
    /// nothing from it (its writes cost 5 ms either way), so it is ext4 only. A
    /// short entry leaves reserved blocks past its end; it is rejected, and
    /// staging removed, all the same.
    private let reservesSpace: Bool
    /// Smaller files are written as they come: the call would cost more than it saves.
    static let reserveMinimumBytes: Int64 = 1 << 20

    public init(root: FileDescriptor, policy: Policy) {
        self.reservesSpace = (try? FilesystemKind(of: root))?.isExt4 ?? false
        self.directories = Root.Descent(Root(root), limit: Self.openLimit)
        self.fileMode = FileMode(policy.stagedFileMode)
        self.directoryMode = FileMode(policy.stagedDirectoryMode)
    }

    public mutating func makeDirectory(_ path: EntryPath) throws(SystemError) {
        _ = try directory(path.components[...])
    }

    public mutating func beginFile(_ path: EntryPath, size: Int64?) throws(SystemError) {
        precondition(file == nil, "beginFile while a file is open")
        filePath = Array(path.components.joined(separator: [UInt8(ascii: "/")]))
        let options: OpenOptions = [.writeOnly, .create, .exclusive, .noFollow]
        let opened: FileDescriptor
        if let beneath = try openBeneath(path, options) {
            opened = beneath
        } else {
            let parent = try directory(path.components.dropLast())
            let name = path.components[path.components.count - 1]
            opened = try parent.open(name, options, mode: fileMode)
        }
        file = SharedDescriptor(OwnedDescriptor(opened))
        fileName = path.raw
        fileBytes = 0
        // A hint: where it cannot be had, the writes allocate as they go.
        if reservesSpace, let size, size >= Self.reserveMinimumBytes { try? opened.reserveSpace(size) }
    }

    /// The file at `path` created with one openat2 from the root, where every
    /// directory above it is one this writer made or entered (so no link, and
    /// nothing but a directory, stands on the way; openat2 refuses both anyway);
    /// nil where it is not, or where openat2 is refused, so that the caller walks
    /// from descriptor to descriptor. Archives that spread their files over more
    /// directories than the descent keeps open (round robin, say) would pay an
    /// openat and a close per component and file otherwise.
    private mutating func openBeneath(_ path: EntryPath, _ options: OpenOptions) throws(SystemError) -> FileDescriptor? {
        guard opensBeneath, path.components.count > 1 else { return nil }
        let parent = Array(path.components.dropLast().joined(separator: [UInt8(ascii: "/")])) + [UInt8(ascii: "/")]
        guard made.contains(parent) else { return nil }
        do {
            return try directories.root.directory.open(beneath: filePath, options, mode: fileMode)
        } catch where error.errno == .notImplemented || error.errno == .notPermitted {
            // A kernel before 5.6, or a system-call filter that refuses openat2.
            opensBeneath = false
            return nil
        }
    }

    public mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError) {
        guard let file else { preconditionFailure("write without an open file") }
        do {
            try file.descriptor.writeAll(chunk)
            fileBytes += Int64(chunk.count)
            unannounced += Int64(chunk.count)
            if let notices, unannounced >= WritingNotice.step {
                // A notice that cannot be written only costs the supervisor its head start.
                try? notices.writeAll(WritingNotice.line(bytes: unannounced))
                unannounced = 0
            }
        } catch {
            throw SystemError("write", fileName, error.errno)
        }
    }

    public mutating func endFile() throws(SystemError) {
        guard let done = file else { preconditionFailure("endFile without an open file") }
        file = nil
        done.close()
        filesWritten += 1
        // Closed, so no descriptor of this process can write to it any more. A
        // notice that cannot be written only costs the supervisor its head start.
        // This may run on a writing thread (PipelinedSink) while the scan's thread
        // writes progress lines: a pipe write of at most PIPE_BUF (4,096) bytes is
        // atomic, so a longer notice (a path beyond 2,040 bytes) is not sent.
        if let notices, fileBytes >= WrittenFileNotice.minimumBytes {
            let line = WrittenFileNotice.line(for: filePath)
            if line.count <= 4096 { try? notices.writeAll(line) }
        }
    }

    public mutating func close() {
        file?.close()
        file = nil
        directories.closeAll()
    }

    /// The open directory at `components` beneath the root, made where missing,
    /// each component opened with O_NOFOLLOW from its parent's descriptor.
    private mutating func directory(_ components: ArraySlice<[UInt8]>) throws(SystemError) -> FileDescriptor {
        let directories = self.directories
        var made = self.made
        var directoriesMade = self.directoriesMade
        defer {
            self.made = made
            self.directoriesMade = directoriesMade
        }
        var created = false
        let directoryMode = self.directoryMode
        return try directories.directory(components, entering: { (parent, component, path) throws(SystemError) in
            created = false
            guard !made.contains(path) else { return }
            do throws(SystemError) {
                try parent.makeDirectory(component, mode: directoryMode)
                created = true
            } catch where error.errno == .exists {
                // Made by an earlier entry of this archive: staging holds nothing else.
            }
            made.insert(path)
        }, entered: { (_, _) throws(SystemError) in
            guard created else { return }
            directoriesMade += 1
        })
    }
}

/// Counts and forgets.
public struct DiscardingSink: EntrySink {
    public init() {}
    public mutating func makeDirectory(_ path: EntryPath) {}
    public mutating func beginFile(_ path: EntryPath, size: Int64?) {}
    public mutating func write(_ chunk: UnsafeRawBufferPointer) {}
    public mutating func endFile() {}
    public mutating func close() {}
}
