import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Conflicts name both entries, the same in either order")
struct ConflictOtherEntryTests {
    typealias Item = (name: String, kind: ConflictTracker.Kind)

    func violation(_ items: [Item]) -> PathViolation? {
        var tracker = ConflictTracker()
        for item in items {
            let path = try! EntryPath(validating: Array(item.name.utf8), policy: Policy())
            if let found = tracker.record(path, as: item.kind) { return found }
        }
        return nil
    }

    @Test("a collision names the smaller spelling as the entry and the other as other", arguments: [
        ([("README.txt", ConflictTracker.Kind.file), ("readme.txt", .file)], "README.txt", "readme.txt"),
        ([("Docs/a.txt", .file), ("docs/b.txt", .file)], "Docs", "docs"),
    ])
    func collision(_ items: [Item], _ entry: String, _ other: String) {
        for order in [items, items.reversed()] {
            let found = violation(order)
            expectEqual(found?.reason, .nameCollision)
            expectEqual(found?.entry, Array(entry.utf8), "\(order.map(\.name))")
            expectEqual(found?.other, Array(other.utf8), "\(order.map(\.name))")
        }
    }

    @Test("a name used as a file and as a directory names the path beneath it, in either order")
    func conflict() {
        let items: [Item] = [("docs", .file), ("docs/a.txt", .file)]
        for order in [items, items.reversed()] {
            let found = violation(order)
            expectEqual(found?.reason, .pathConflict)
            expectEqual(found?.entry, Array("docs".utf8))
            expectEqual(found?.other, Array("docs/a.txt".utf8), "\(order.map(\.name))")
        }
    }
}
