#if canImport(Glibc)
import Glibc
#endif
import AirlockPolicy
import AirlockSystem

/// Where extracted entries go: private staging, or nowhere (inspection, and the
/// rest of an archive after its first violation, which is still read so that the
/// verdict does not depend on entry order).
public protocol EntrySink {
    mutating func makeDirectory(_ path: EntryPath) throws(SystemError)
    mutating func beginFile(_ path: EntryPath) throws(SystemError)
    mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError)
    mutating func endFile() throws(SystemError)
    /// Closes whatever is open; called on every path out of a scan.
    mutating func close()
}

/// Writes entries beneath the staging directory, one component at a time from
/// directory descriptors: O_NOFOLLOW on every open, O_EXCL on every file, modes
/// set explicitly (never from the archive, never setuid, setgid or sticky).
public struct StagingWriter: EntrySink {
    private let root: FileDescriptor
    private let fileMode: mode_t
    private let directoryMode: mode_t
    /// The open directories of the last path written, so consecutive entries in
    /// one directory do not walk from the root again. At most `maxDepth` deep.
    private var chain: [(name: [UInt8], fd: FileDescriptor)] = []
    private var file: FileDescriptor?
    private var fileName: [UInt8] = []

    public private(set) var filesWritten: Int64 = 0
    public private(set) var directoriesMade: Int64 = 0

    public init(root: FileDescriptor, policy: Policy) {
        self.root = root
        self.fileMode = mode_t(policy.fileMode)
        self.directoryMode = mode_t(policy.directoryMode)
    }

    public mutating func makeDirectory(_ path: EntryPath) throws(SystemError) {
        try enter(path.components)
    }

    public mutating func beginFile(_ path: EntryPath) throws(SystemError) {
        precondition(file == nil, "beginFile while a file is open")
        try enter(Array(path.components.dropLast()))
        let parent = chain.last?.fd ?? root
        let name = path.components[path.components.count - 1]
        file = try parent.open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        fileName = path.raw
    }

    public mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError) {
        guard let file else { preconditionFailure("write without an open file") }
        do {
            try file.writeAll(chunk)
        } catch {
            throw SystemError("write", fileName, error.errno)
        }
    }

    public mutating func endFile() throws(SystemError) {
        guard let open = file else { preconditionFailure("endFile without an open file") }
        file = nil
        try open.closeAfter { (fd) throws(SystemError) in try fd.changeMode(fileMode) }
        filesWritten += 1
    }

    public mutating func close() {
        file?.close()
        file = nil
        for (_, fd) in chain { fd.close() }
        chain.removeAll()
    }

    /// Makes the chain of open directories equal `components`, creating what is missing.
    private mutating func enter(_ components: [[UInt8]]) throws(SystemError) {
        var shared = 0
        while shared < chain.count, shared < components.count, chain[shared].name == components[shared] { shared += 1 }
        while chain.count > shared { chain.removeLast().fd.close() }
        for component in components[shared...] {
            let parent = chain.last?.fd ?? root
            var created = true
            do {
                try parent.makeDirectory(component, mode: 0o700)
            } catch where error.errno == .exists {
                // Made by an earlier entry of this archive: staging holds nothing else.
                created = false
            }
            let fd = try parent.openDirectory(component)
            chain.append((component, fd))
            if created {
                try fd.changeMode(directoryMode)
                directoriesMade += 1
            }
        }
    }
}

/// Counts and forgets.
public struct DiscardingSink: EntrySink {
    public init() {}
    public mutating func makeDirectory(_ path: EntryPath) {}
    public mutating func beginFile(_ path: EntryPath) {}
    public mutating func write(_ chunk: UnsafeRawBufferPointer) {}
    public mutating func endFile() {}
    public mutating func close() {}
}
