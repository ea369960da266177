import AirlockPolicy
import AirlockQuarantine

/// The outbox entry's name for a drop: the drop's name without its archive
/// suffix (`NameCandidates.split`, which release uses too), then `-2`, `-3`, …
/// while taken; the drop's id when the name would fail the component policy.
enum OutboxName {
    /// The name to try first.
    static func base(for dropName: [UInt8], id: String, policy: Policy) -> [UInt8] {
        let name = NameCandidates.split(dropName).stem
        guard let path = try? EntryPath(validating: name, policy: policy), path.depth == 1, !path.hasTrailingSlash,
              name.first != UInt8(ascii: "."), name.count <= NameCandidates.maxNameBytes else {
            return Array(id.utf8)
        }
        return name
    }

    /// The candidates in order: base, base-2, … base-999, each fitting a directory entry.
    static func candidates(base: [UInt8]) -> LazyMapSequence<Range<Int>, [UInt8]> {
        NameCandidates.candidates(stem: base, suffix: [])
    }
}
