/// The entry limit's one counting rule, for the decoder child that reads an
/// archive and for the supervisor that audits the tree it left.
///
/// An entry is what the archive lists: each file and each directory entry (pax
/// and GNU extension headers belong to the entry they describe). A directory
/// that only the paths beneath it imply is not an entry, so 1,000 files in
/// 1,010 implied directories are 1,000 entries.
///
/// The supervisor cannot see the listing, only the tree, and counts the fewest
/// entries that could have made it: every file, and every directory with
/// nothing in it (nothing beneath it implies it). An honest child's tree never
/// needs more entries than the archive listed, so the two counts can disagree
/// only when the child lied.
extension Policy {
    /// True when `count` entries are within the limit (inclusive).
    public func admitsEntries(_ count: Int) -> Bool {
        count <= maxEntries
    }

    /// The fewest archive entries that produce a tree of `files` files and
    /// `emptyDirectories` directories holding nothing.
    public static func fewestEntries(files: Int, emptyDirectories: Int) -> Int {
        files + emptyDirectories
    }

    /// The most files and directories a tree of admitted entries can hold: each
    /// entry brings itself and at most `maxDepth - 1` implied parents. The audit
    /// stops walking past it, so a lying child cannot make it walk forever.
    public var maxTreeNodes: Int {
        let (nodes, overflow) = maxEntries.multipliedReportingOverflow(by: max(maxDepth, 1))
        return overflow ? Int.max : nodes
    }
}
