import AirlockConfiguration
import AirlockRoot
import AirlockSystem

/// The names of one journal's files in one directory, from its stem: `STEM.jsonl`,
/// the rotated `STEM.N.jsonl`, `STEM.lock`, `STEM.generations` and `STEM.next`.
/// A single daemon's journal is `state/journal.*`; in a fleet each instance writes
/// its own, `state/journal/NAME.*`, because appends of several hosts to one file
/// are not atomic on NFS.
public struct JournalFiles: Sendable, Hashable {
    let directory: FileDescriptor
    let stem: String

    /// The root's own journal, in `state/`.
    static func single(_ state: FileDescriptor) -> JournalFiles { JournalFiles(directory: state, stem: "journal") }

    /// Where a fleet's instances keep their journals: `state/journal/`.
    static let fleetDirectory: [UInt8] = RootLayout.instanceJournals

    var current: [UInt8] { Array("\(stem).jsonl".utf8) }
    func rotated(_ index: Int) -> [UInt8] { Array("\(stem).\(index).jsonl".utf8) }
    var lock: [UInt8] { Array("\(stem).lock".utf8) }
    var generations: [UInt8] { Array("\(stem).generations".utf8) }
    var generationsTemporary: [UInt8] { Array("\(stem).generations.tmp".utf8) }
    /// Where the writer creates the next current file before it has a generation.
    var next: [UInt8] { Array("\(stem).next".utf8) }

    /// The stems of the instances' journals in `directory` (`state/journal/`), found
    /// by their `NAME.generations`: a journal has one from its first file on, and
    /// it is never missing (replaced by a rename), while `NAME.jsonl` is, between a
    /// rotation and the next append.
    static func instanceStems(in directory: FileDescriptor) throws(SystemError) -> [String] {
        try directory.entryNames().compactMap { entry -> String? in
            let text = String(decoding: entry, as: UTF8.self)
            guard text.hasSuffix(".generations") else { return nil }
            let stem = String(text.dropLast(12))
            return ClusterSettings.problem(with: stem) == nil ? stem : nil
        }.sorted()
    }

    /// Every journal of the root whose `state/` is `state`: its own (`-`) and each
    /// instance's, by name; and the owner of `state/journal/` opened for them (nil
    /// when it is missing: no fleet ever ran here), which the caller keeps while
    /// it reads the instances' journals.
    static func every(in state: FileDescriptor) throws(SystemError) -> (journals: [(name: String, files: JournalFiles)], directory: SharedDescriptor?) {
        var journals: [(name: String, files: JournalFiles)] = [("-", .single(state))]
        let directory: FileDescriptor
        do {
            directory = try state.open(fleetDirectory, [.readOnly, .directory, .noFollow])
        } catch where error.errno == .noEntry {
            return (journals, nil)
        }
        let owned = OwnedDescriptor(directory)
        for stem in try instanceStems(in: owned.descriptor) { journals.append((stem, JournalFiles(directory: owned.descriptor, stem: stem))) }
        return (journals, SharedDescriptor(owned))
    }
}

extension Journal {
    /// The bytes of every journal of the root, for readers: this journal's files
    /// alone where there is no other (a single daemon's root: unchanged), else the
    /// lines of all of them, the root's own and each instance's, in order of their
    /// times (stable: one file's lines keep their order), as one chunk.
    func fleetContents() throws(SystemError) -> [[UInt8]] {
        let (journals, directory) = try JournalFiles.every(in: state)
        defer { withExtendedLifetime(directory) {} }
        var every: [[[UInt8]]] = []
        for journal in journals {
            every.append(try Journal.contents(of: journal.files, keep: keep, maxBytes: maxBytes))
        }
        let nonEmpty = every.filter { !$0.isEmpty }
        guard nonEmpty.count > 1 else { return nonEmpty.first ?? [] }
        var lines: [(time: ArraySlice<UInt8>, line: ArraySlice<UInt8>)] = []
        for journal in nonEmpty {
            for bytes in journal {
                for line in bytes.split(separator: UInt8(ascii: "\n")) {
                    lines.append((Journal.leadingTime(line) ?? [], line))
                }
            }
        }
        // Swift's sort is not stable; the index keeps a file's own order among equal times.
        let ordered = lines.enumerated().sorted { a, b in
            a.element.time == b.element.time ? a.offset < b.offset : a.element.time.lexicographicallyPrecedes(b.element.time)
        }
        var merged: [UInt8] = []
        for (_, entry) in ordered {
            merged += entry.line
            merged.append(0x0A)
        }
        return [merged]
    }
}
