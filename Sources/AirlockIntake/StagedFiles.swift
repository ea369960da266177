import AirlockPolicy
import AirlockSystem
import AirlockText
import Dispatch
import Synchronization

/// The bytes of the staged files opened so far, added from every hashing thread.
final class ByteTally: Sendable {
    private let bytes = Atomic<Int64>(0)

    /// Adds `size` and returns the new total.
    func add(_ size: Int64) -> Int64 {
        bytes.add(size, ordering: .relaxed).newValue
    }
}

extension StagingAudit {
    /// A regular file the walk has judged by name, to be readied.
    struct WaitingFile {
        /// The directory holding it, open until it is readied.
        let directory: FileDescriptor
        let name: [UInt8]
        /// Its path beneath staging.
        let path: [UInt8]
    }

    /// Readies the regular files `files` names, each in its directory, on as many threads
    /// as there are processors, and returns them in the same order: each is
    /// opened once, without following a link and without blocking on what is not
    /// a regular file; judged on its descriptor's fstat (a regular file, one
    /// link, the child's mode, within the per-file quota, and no file read once
    /// those opened hold more than the total allows); given the outbox's mode and
    /// group where it lacks them; fsynced with `fsyncEach`; and hashed, unless `early` holds a hash
    /// of that inode still provably current.
    ///
    /// The first failure in `files`' order is thrown, so the same tree always gets
    /// the same verdict.
    func ready(_ files: [WaitingFile], opened: ByteTally) throws -> [StagedFile] {
        let results = Mutex<[Result<StagedFile, any Error>?]>(Array(repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let file = files[index]
            let result = Result { () throws -> StagedFile in try ready(file.name, at: file.path, in: file.directory, opened: opened) }
            results.withLock { $0[index] = result }
        }
        let readied = results.withLock { $0 }
        var staged: [StagedFile] = []
        staged.reserveCapacity(readied.count)
        for result in readied { staged.append(try result!.get()) }
        return staged
    }

    private func ready(_ name: [UInt8], at path: [UInt8], in directory: FileDescriptor, opened: ByteTally) throws -> StagedFile {
        let options: OpenOptions = [.readOnly, .noFollow, .nonBlocking, .noControllingTerminal]
        return try directory.open(forReading: name, options).closeAfter { (fd) throws -> StagedFile in
            let status = try fd.status()
            guard status.kind == .regular else { throw Failure(detail: "\"\(EscapedName(path))\" is a \(status.kind)") }
            guard status.linkCount == 1, status.permissions == childFileMode else {
                throw Failure(detail: "file \"\(EscapedName(path))\" has \(status.linkCount) links and mode \(String(status.permissions, radix: 8))")
            }
            guard status.size <= policy.maxFileBytes else {
                throw Failure(detail: "file \"\(EscapedName(path))\" holds \(status.size) bytes, over the \(policy.maxFileBytes)-byte limit")
            }
            guard opened.add(status.size) <= policy.maxTotalBytes else {
                throw Failure(detail: "files holding more than \(policy.maxTotalBytes) bytes in all")
            }
            try modes.set(on: fd, status: status)
            if fsyncEach { try fd.sync() }
            if let known = early?.sha256(for: status) { return StagedFile(path: path, size: status.size, sha256: known) }
            // The commit's syncfs (or fsync) waits for a large file's pages: start
            // writing them now, while they are hashed, unless a syncfs started when
            // the decoder exited is writing them already. Only a head start:
            // durability is the later call's, which reports any failure. Small files
            // are left to that call, which writes them together for less than a
            // call per file costs.
            if startsWriteback && status.size >= Digest.writebackMinimumBytes { try? fd.startWriteback() }
            return StagedFile(path: path, size: status.size, sha256: try Digest.sha256(of: fd, limit: policy.maxFileBytes, size: status.size))
        }
    }
}
