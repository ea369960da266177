extension Root {
    /// Directories beneath a root kept open between descents, so that a writer
    /// whose entries spread over a few directories does not walk from the root
    /// for each one. Every directory is opened from its parent's descriptor with
    /// O_NOFOLLOW, like `Root.openDirectory`; at most `limit` are open at once
    /// (when a descent needs more, all are closed and it starts from the root).
    /// Each descriptor held has an owner: closed when dropped, at `closeAll()`,
    /// or when the descent goes.
    public final class Descent {
        public let root: Root
        private let limit: Int
        /// Open directories by path ("a/b/").
        private var open: [[UInt8]: SharedDescriptor] = [:]

        /// - Parameter limit: how many directories it may hold open at once (a
        ///   confined decoder's RLIMIT_NOFILE is small).
        public init(_ root: Root, limit: Int) {
            precondition(limit > 0, "a descent holds at least one directory")
            self.root = root
            self.limit = limit
        }

        /// How many directories it holds open.
        public var count: Int { open.count }

        /// The directory at `components` beneath the root (the root itself when
        /// empty), opened a component at a time from the deepest one already open.
        /// `entering(parent, component, path)` runs before each component is
        /// opened (to make it where missing); `entered(directory, path)` right
        /// after. `path` is the component's path beneath the root, "/"-terminated.
        /// The descriptor returned stays open until this descent drops it: use it
        /// before the next descent, never close it.
        public func directory(_ components: ArraySlice<[UInt8]>,
                              entering: (FileDescriptor, [UInt8], [UInt8]) throws(SystemError) -> Void,
                              entered: (FileDescriptor, [UInt8]) throws(SystemError) -> Void)
            throws(SystemError) -> FileDescriptor {
            guard !components.isEmpty else { return root.directory }
            var paths: [[UInt8]] = []
            var path: [UInt8] = []
            for component in components {
                path += component + [UInt8(ascii: "/")]
                paths.append(path)
            }
            // The deepest prefix already open.
            var depth = paths.count
            while depth > 0, open[paths[depth - 1]] == nil { depth -= 1 }
            if depth == paths.count, let held = open[paths[depth - 1]] { return held.descriptor }
            if open.count + (paths.count - depth) > limit {
                closeAll()
                depth = 0
            }
            var parent = depth > 0 ? open[paths[depth - 1]]!.descriptor : root.directory
            for index in depth..<paths.count {
                let component = components[components.startIndex + index]
                try entering(parent, component, paths[index])
                let held = SharedDescriptor(OwnedDescriptor(try parent.openDirectory(component)))
                open[paths[index]] = held
                try entered(held.descriptor, paths[index])
                parent = held.descriptor
            }
            return parent
        }

        /// Closes every directory it holds.
        public func closeAll() {
            for held in open.values { held.close() }
            open.removeAll()
        }
    }
}
