import AirlockPolicy
import AirlockSystem
import AirlockText

/// A sink that gives every file it passes on (or its share of them) its content
/// classes, from the bytes the scan hands it anyway: no second read of the drop
/// or of staging.
public struct ClassifyingSink<Inner: EntrySink>: EntrySink {
    /// Which files a sink classifies, by the size their archive declares. Two
    /// sinks, one inside the other, can split the files between two threads
    /// (`ArchiveDecoderProgram.scanIntoStaging`); a declared size is a hint, and
    /// a lie only moves the work, never skips it: each file is in exactly one share.
    public enum Share: Sendable {
        case every
        /// Files declaring less than this, or no size.
        case smallerThan(Int64)
        /// Files declaring at least this.
        case atLeast(Int64)

        func includes(_ size: Int64?) -> Bool {
            switch self {
            case .every: return true
            case .smallerThan(let bound): return size.map { $0 < bound } ?? true
            case .atLeast(let bound): return size.map { $0 >= bound } ?? false
            }
        }
    }

    public private(set) var inner: Inner
    private let share: Share
    private var classifier: ContentClassifier?
    private var name: [UInt8] = []
    /// Files begun so far, this one included: every sink of a split counts alike.
    private var files = 0
    /// The files with at least one class, by escaped entry name, each with its
    /// number in the scan's order.
    public private(set) var numbered: [(file: Int, entry: ClassifiedEntry)] = []

    public init(_ inner: Inner, share: Share = .every) {
        self.inner = inner
        self.share = share
    }

    /// The files with at least one class, in scan order.
    public var classified: [ClassifiedEntry] { numbered.map(\.entry) }

    /// What two sinks that split the files classified, in scan order.
    public static func merged(_ one: [(file: Int, entry: ClassifiedEntry)], _ other: [(file: Int, entry: ClassifiedEntry)]) -> [ClassifiedEntry] {
        (one + other).sorted { $0.file < $1.file }.map(\.entry)
    }

    public mutating func makeDirectory(_ path: EntryPath) throws(SystemError) { try inner.makeDirectory(path) }

    public mutating func beginFile(_ path: EntryPath, size: Int64?) throws(SystemError) {
        try inner.beginFile(path, size: size)
        files += 1
        name = path.raw
        classifier = share.includes(size) ? ContentClassifier(name: path.raw) : nil
    }

    public mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError) {
        try inner.write(chunk)
        classifier?.feed(chunk)
    }

    public mutating func endFile() throws(SystemError) {
        try inner.endFile()
        guard var done = classifier else { return }
        classifier = nil
        let classes = done.finish()
        if !classes.isEmpty { numbered.append((files, ClassifiedEntry(entry: EscapedName(name).text, classes: classes))) }
    }

    public mutating func close() { inner.close() }
}

/// Content classes for callers that hold a whole file in memory (rendered keyed output, tests).
public enum ContentClasses {
    /// The classes of a file named `name` (its path in the entry) holding `bytes`,
    /// fed to the classifier `chunkSize` bytes at a time as a scan would feed them.
    public static func of(name: [UInt8], bytes: [UInt8], chunkSize: Int = 64 * 1024) -> Set<ContentClass> {
        var classifier = ContentClassifier(name: name)
        bytes.withUnsafeBytes { all in
            var start = 0
            while start < all.count {
                let end = min(all.count, start + chunkSize)
                classifier.feed(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                start = end
            }
        }
        return classifier.finish()
    }
}
