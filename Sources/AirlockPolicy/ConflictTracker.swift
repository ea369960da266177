/// Finds duplicates, file-versus-directory conflicts and names that collide after
/// Unicode normalisation and case folding, across every entry of one archive,
/// whatever their order.
///
/// Each prefix of every path (implied parent directories included) is keyed by
/// its components' canonical caseless keys (`CaselessMatch`), so `Docs/a` and
/// `docs/b`, `ß`, `ẞ` and `ss`, and NFC and NFD spellings all meet.
public struct ConflictTracker: Sendable {
    public enum Kind: Sendable, Equatable {
        case file
        case directory
        /// An entry of a type that is rejected anyway (link, device): it still
        /// occupies its name, so `x` (symlink) then `x/passwd` also conflicts.
        case other
    }

    private struct Slot {
        var spelling: [UInt8]
        var kind: Kind
        var declared: Bool
        /// The full path of the entry that first passed through this name, to
        /// name as the other side of a conflict.
        var origin: [UInt8]
    }

    private var slots: [[UInt8]: Slot] = [:]

    public init() {}

    /// Records `path` as an entry of `kind`; returns the violation it causes, if any.
    public mutating func record(_ path: EntryPath, as kind: Kind) -> PathViolation? {
        var key: [UInt8] = []
        var spelling: [UInt8] = []
        let full = path.components.enumerated().flatMap { $0 == 0 ? $1 : [UInt8(ascii: "/")] + $1 }
        for (position, component) in path.components.enumerated() {
            if position > 0 {
                // NUL separates components: no valid name holds one.
                key.append(0)
                spelling.append(UInt8(ascii: "/"))
            }
            key += CaselessMatch.key(path.texts[position])
            spelling += component
            let isLast = position == path.components.count - 1
            let wanted: Kind = isLast ? kind : .directory
            guard var slot = slots[key] else {
                slots[key] = Slot(spelling: spelling, kind: wanted, declared: isLast, origin: full)
                continue
            }
            if slot.spelling != spelling {
                // Report the smaller spelling, so either entry order names the same one.
                let (reported, other) = slot.spelling.lexicographicallyPrecedes(spelling) ? (slot.spelling, spelling) : (spelling, slot.spelling)
                return PathViolation(.nameCollision, "collides with another name after Unicode normalisation and case folding",
                                     entry: reported, other: other)
            }
            if slot.kind != wanted || wanted == .other {
                // The other side is the entry that is not this name itself: the one
                // beneath it, or the one that made it a non-directory.
                return PathViolation(.pathConflict, "used both as a directory and as a non-directory", entry: spelling,
                                     other: full != spelling ? full : slot.origin)
            }
            if isLast {
                if slot.declared || wanted != .directory {
                    return PathViolation(.duplicatePath, "the same name appears twice", entry: spelling)
                }
                slot.declared = true
                slots[key] = slot
            }
        }
        return nil
    }
}
