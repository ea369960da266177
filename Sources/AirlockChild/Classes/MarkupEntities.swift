/// The checks a file that declares entities adds: a reference to one stands
/// for text the search cannot see (see `MarkupScan`).
extension MarkupScan.Found {
    /// Whether `url` ends with an entity and then the end of "script" (or
    /// nothing): the entity may stand for the rest of a script scheme, before a `:`.
    static func endsEntityThenEndOfScript(_ url: UInt64) -> Bool {
        for count in 0..<6 where UInt8(truncatingIfNeeded: url >> (8 * count)) == CharacterReference.entity {
            return url & lowBytes(count) == script & lowBytes(count)
        }
        return false
    }

    /// Whether `url` ends with an entity or with the start of "script" (from
    /// "s" to all of it): an entity next may stand for the rest, or for the `:`.
    static func endsEntityOrStartOfScript(_ url: UInt64) -> Bool {
        if UInt8(truncatingIfNeeded: url) == CharacterReference.entity { return true }
        return (1...6).contains { url & lowBytes($0) == script >> (8 * (6 - $0)) }
    }

    @inline(__always) static func lowBytes(_ count: Int) -> UInt64 { count == 0 ? 0 : (1 << (8 * count)) - 1 }

    /// Whether the `<` at `index` opens an entity's declaration (`<!ENTITY` and a blank).
    static func declaresEntity(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Bool {
        ByteText.isFollowed(bytes, after: index, byWordAndBlank: "!ENTITY")
    }
}
