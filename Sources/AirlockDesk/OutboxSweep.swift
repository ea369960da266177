import AirlockConfiguration
import AirlockIntake
import AirlockRoot
import AirlockSystem
import Foundation

/// `airlock outbox sweep`: removes every outbox entry its consumers have
/// acknowledged (see Acknowledgements). One entry that cannot be removed is
/// reported and left; the sweep goes on with the others, so no one entry can
/// stall it. Entries a consumer renamed to a dot-name before acknowledgements
/// (roots of the previous layout) are handed back already and removed too.
public struct OutboxSweep {
    /// What one sweep did.
    public struct Report: Sendable {
        /// Removed: the entry's name and drop id ("" for a dot-named legacy hand-back).
        public var removed: [(name: [UInt8], id: String)] = []
        /// Could not be removed or judged: the entry's name and why.
        public var failed: [(name: [UInt8], reason: String)] = []
        /// Acknowledgements ignored because they did not change after the entry landed.
        public var early: [(group: String, id: String)] = []
        /// Entries still waiting for an acknowledgement.
        public var waiting = 0
    }

    let layout: RootLayout
    let groups: [String]
    let needsAll: Bool

    public init(layout: RootLayout, configuration: Configuration) {
        self.layout = layout
        groups = Acknowledgements.groups(configuration)
        needsAll = configuration.removeWhenAllAcknowledge
    }

    /// Sweeps once. Throws only when the outbox itself or `acks/` cannot be read.
    public func run() throws(SystemError) -> Report {
        var report = Report()
        // A second's margin: file times come from the kernel's coarse clock.
        let started = WallClock.nanoseconds() - 1_000_000_000
        let acks = try openGroupDirectories()
        defer { acks.forEach { $0.directory?.close() } }
        var present: Set<String> = []
        for name in try layout.outbox.entryNames() {
            if name.first == UInt8(ascii: ".") {
                remove(name, id: "", from: [], &report)
                continue
            }
            do throws(SystemError) {
                let (id, landed) = try entry(name)
                present.insert(id)
                var acknowledged = 0
                for group in acks {
                    switch try group.directory.map({ (fd) throws(SystemError) in try Self.acknowledgement(id, in: fd, after: landed) }) ?? .absent {
                    case .valid: acknowledged += 1
                    case .early: report.early.append((group.name, id))
                    case .absent: break
                    }
                }
                if !acks.isEmpty && (needsAll ? acknowledged == acks.count : acknowledged > 0) {
                    remove(name, id: id, from: acks.compactMap(\.directory), &report)
                } else {
                    report.waiting += 1
                }
            } catch {
                report.failed.append((name, "\(error)"))
            }
        }
        if !report.removed.isEmpty { try? layout.outbox.sync() }
        for group in acks { if let fd = group.directory { Self.removeOrphans(in: fd, keeping: present, before: started) } }
        return report
    }

    /// Each group's directory beneath `acks/`; nil for one that is missing (then
    /// nothing is acknowledged by that group: init makes it).
    func openGroupDirectories() throws(SystemError) -> [(name: String, directory: FileDescriptor?)] {
        guard !groups.isEmpty else { return [] }
        let acks: FileDescriptor
        do {
            acks = try layout.root.openDirectory(Array(Acknowledgements.directoryName.utf8))
        } catch where error.errno == .noEntry {
            return groups.map { ($0, nil) }
        }
        return acks.closeAfter { acks in
            groups.map { group in (group, try? acks.openDirectory(Array(group.utf8))) }
        }
    }

    /// An entry's drop id and when it landed, both from its manifest: the id it
    /// holds and its ctime, which nothing changes once the entry is committed (the
    /// entry directory's own ctime changes with every removal in it, so a sweep
    /// that removed part of an entry would make its acknowledgements look early).
    /// Only a directory airlock owns is an entry.
    func entry(_ name: [UInt8]) throws(SystemError) -> (id: String, landed: Int64) {
        let status = try layout.outbox.status(of: name)
        guard status.kind == .directory, status.owner == Accounts.effectiveUserID else {
            throw SystemError("not an entry airlock made (a \(status.kind) owned by uid \(status.owner)); left as it is", name, .notPermitted)
        }
        return try layout.outbox.openDirectory(name).closeAfter { (entry) throws(SystemError) in
            let manifest = try entry.open(Manifest.name, [.readOnly, .noFollow, .nonBlocking])
            let (bytes, manifestStatus) = try manifest.closeAfter { (fd) throws(SystemError) in
                (try fd.readAll(limit: 64 << 20), try fd.status())
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                  let id = object["id"] as? String, !id.isEmpty, !id.contains("/"), id != ".", id != ".." else {
                throw SystemError("read the manifest's id", Manifest.name, .invalidArgument)
            }
            return (id, manifestStatus.changedNanoseconds)
        }
    }

    enum Acknowledgement { case valid, early, absent }

    /// Whether `acks/GROUP/ID` acknowledges an entry that landed at `landed`: a
    /// regular file whose ctime is later.
    static func acknowledgement(_ id: String, in directory: FileDescriptor, after landed: Int64) throws(SystemError) -> Acknowledgement {
        let status: FileStatus
        do {
            status = try directory.status(of: Array(id.utf8))
        } catch where error.errno == .noEntry {
            return .absent
        }
        guard status.kind == .regular else { return .absent }
        return status.changedNanoseconds > landed ? .valid : .early
    }

    /// Removes one entry, then its acknowledgements; a failure is reported, not thrown.
    /// Everything else goes before the manifest, and a failure on one part does not
    /// stop the others, so an entry left half removed still has its id for the next sweep.
    func remove(_ name: [UInt8], id: String, from acks: [FileDescriptor], _ report: inout Report) {
        do throws(SystemError) {
            let status = try layout.outbox.status(of: name)
            if status.kind == .directory {
                var firstError: SystemError?
                try layout.outbox.openDirectory(name).closeAfter { (entry) throws(SystemError) in
                    for child in try entry.entryNames() where child != Manifest.name {
                        do throws(SystemError) { try entry.removeTree(child) } catch { firstError = firstError ?? error }
                    }
                }
                if let firstError { throw firstError }
            }
            try layout.outbox.removeTree(name)
        } catch {
            report.failed.append((name, "\(error)"))
            return
        }
        report.removed.append((name, id))
        for directory in acks { try? directory.unlink(Array(id.utf8)) }
    }

    /// Removes acknowledgements of entries that are not in the outbox and that were
    /// made before this sweep began: made before their entry existed, or left
    /// by an entry already gone. One made since might be for an entry that landed
    /// after the listing, so it stays.
    static func removeOrphans(in directory: FileDescriptor, keeping present: Set<String>, before started: Int64) {
        guard let names = try? directory.entryNames() else { return }
        for name in names {
            guard !present.contains(String(decoding: name, as: UTF8.self)),
                  let status = try? directory.status(of: name), status.changedNanoseconds < started else { continue }
            try? directory.unlink(name)
        }
    }
}
