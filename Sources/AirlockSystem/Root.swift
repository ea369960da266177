/// A directory and what lies beneath it, reached by descriptor one name at a
/// time and never through a link: each directory is opened from its parent's
/// descriptor with O_NOFOLLOW, to a bounded depth, and each descriptor the walk
/// opens has an owner that closes it on every way out. Opening an airlock
/// root's directories, auditing staging and removing a tree all walk this way.
public struct Root: Sendable {
    /// The directory walked from; borrowed, never closed here.
    public let directory: FileDescriptor

    public init(_ directory: FileDescriptor) {
        self.directory = directory
    }

    /// The directory at `components` beneath this one, opened a component at a
    /// time; each one passed through is closed once the next is open.
    public func openDirectory(_ components: [[UInt8]]) throws(SystemError) -> OwnedDescriptor {
        precondition(!components.isEmpty, "a directory beneath is at least one name")
        var current = OwnedDescriptor(try directory.openDirectory(components[0]))
        for component in components.dropFirst() {
            current = OwnedDescriptor(try current.descriptor.openDirectory(component))
        }
        return current
    }

    /// Visits every entry beneath, depth first, each directory's entries in the
    /// order `entryNames` gives: `visitor.visit` judges each and says whether to
    /// descend into it (a directory), `visitor.leave` follows once everything
    /// beneath that directory was visited. Returns how many entries the root
    /// directory holds.
    ///
    /// - Parameter depthLimit: how many directories deep it may descend before it
    ///   gives up (ELOOP, failing `operation`).
    @discardableResult
    public func walk(depthLimit: Int, operation: String = "walk", _ visitor: inout some TreeVisitor) throws -> Int {
        try Self.walk(directory, path: [], depthLimit: depthLimit, operation: operation, &visitor)
    }

    private static func walk(_ directory: FileDescriptor, path: [UInt8], depthLimit: Int, operation: String,
                             _ visitor: inout some TreeVisitor) throws -> Int {
        let names = try directory.entryNames()
        for name in names {
            let child = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
            guard try visitor.visit(name, in: directory, path: child) else { continue }
            guard depthLimit > 0 else { throw SystemError(operation, name, .tooManyLinks) }
            let sub = OwnedDescriptor(try directory.openDirectory(name))
            let entries = try walk(sub.descriptor, path: child, depthLimit: depthLimit - 1, operation: operation, &visitor)
            try visitor.leave(sub.descriptor, named: name, in: directory, path: child, entries: entries)
        }
        return names.count
    }
}

/// What a `Root.walk` does at each entry.
public protocol TreeVisitor {
    /// Judges `name` in `directory` (`path` beneath the root); true to descend into it.
    mutating func visit(_ name: [UInt8], in directory: FileDescriptor, path: [UInt8]) throws -> Bool
    /// After every entry beneath the directory `name` in `parent` was visited;
    /// `entries`: how many it holds. `directory` is closed when this returns.
    mutating func leave(_ directory: FileDescriptor, named name: [UInt8], in parent: FileDescriptor, path: [UInt8],
                        entries: Int) throws
}
