import AirlockPolicy
import AirlockSystem
import AirlockText

/// A sink that gives every file it passes on its content classes, from the
/// bytes the scan hands it anyway: no second read of the drop or of staging.
public struct ClassifyingSink<Inner: EntrySink>: EntrySink {
    public private(set) var inner: Inner
    private var classifier: ContentClassifier?
    private var name: [UInt8] = []
    /// The files with at least one class, by escaped entry name, in scan order.
    public private(set) var classified: [ClassifiedEntry] = []

    public init(_ inner: Inner) { self.inner = inner }

    public mutating func makeDirectory(_ path: EntryPath) throws(SystemError) { try inner.makeDirectory(path) }

    public mutating func beginFile(_ path: EntryPath, size: Int64?) throws(SystemError) {
        try inner.beginFile(path, size: size)
        name = path.raw
        classifier = ContentClassifier(name: path.raw)
    }

    public mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError) {
        try inner.write(chunk)
        classifier?.feed(chunk)
    }

    public mutating func endFile() throws(SystemError) {
        try inner.endFile()
        guard var done = classifier else { preconditionFailure("endFile without beginFile") }
        classifier = nil
        let classes = done.finish()
        if !classes.isEmpty { classified.append(ClassifiedEntry(entry: EscapedName(name).text, classes: classes)) }
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
