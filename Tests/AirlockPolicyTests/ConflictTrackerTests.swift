import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Conflicts: duplicates, file versus directory, and collisions after NFC and case folding")
struct ConflictTrackerTests {
    typealias Item = (name: String, kind: ConflictTracker.Kind)

    /// The first violation met while recording `items` in order.
    func firstViolation(_ items: [Item]) -> PathViolation? {
        var tracker = ConflictTracker()
        for item in items {
            let path = try! EntryPath(validating: Array(item.name.utf8), policy: Policy())
            if let violation = tracker.record(path, as: item.kind) { return violation }
        }
        return nil
    }

    /// Every order of `items` gives the same reason and reported entry.
    func expectSameInEveryOrder(_ items: [Item], _ reason: Reason?, entry: String? = nil) {
        func permutations(_ list: [Item]) -> [[Item]] {
            guard list.count > 1 else { return [list] }
            return list.indices.flatMap { i in
                var rest = list
                let head = rest.remove(at: i)
                return permutations(rest).map { [head] + $0 }
            }
        }
        for order in permutations(items) {
            let violation = firstViolation(order)
            expectEqual(violation?.reason, reason, "order \(order.map(\.name))")
            if let entry { expectEqual(violation?.entry, Array(entry.utf8), "order \(order.map(\.name))") }
        }
    }

    @Test("an exact duplicate file is duplicate-path")
    func duplicateFile() {
        expectSameInEveryOrder([("a.txt", .file), ("a.txt", .file)], .duplicatePath, entry: "a.txt")
    }

    @Test("a file and a directory of one name conflict in both orders")
    func fileVersusDirectory() {
        expectSameInEveryOrder([("docs", .file), ("docs/a.txt", .file)], .pathConflict, entry: "docs")
        expectSameInEveryOrder([("docs/a.txt", .file), ("docs/", .file)], .pathConflict, entry: "docs")
    }

    @Test("a symlink entry followed by a file beneath it conflicts")
    func linkThenFile() {
        expectSameInEveryOrder([("x", .other), ("x/passwd", .file)], .pathConflict, entry: "x")
    }

    @Test("names equal after case folding collide, and report the same spelling whatever the order")
    func caseCollision() {
        expectSameInEveryOrder([("README.txt", .file), ("readme.txt", .file)], .nameCollision, entry: "README.txt")
        expectSameInEveryOrder([("Docs/a", .file), ("docs/b", .file)], .nameCollision, entry: "Docs")
    }

    @Test("NFC and NFD spellings collide")
    func normalisationCollision() {
        expectSameInEveryOrder([("caf\u{E9}.txt", .file), ("cafe\u{301}.txt", .file)], .nameCollision)
    }

    @Test("full case folding: ß collides with ss, final sigma with sigma")
    func fullFolding() {
        expectSameInEveryOrder([("straße", .file), ("STRASSE", .file)], .nameCollision)
        expectSameInEveryOrder([("λόγος", .file), ("ΛΌΓΟΣ", .file)], .nameCollision)
    }

    @Test("a directory entry for a directory other paths imply is not a conflict")
    func impliedDirectory() {
        expectSameInEveryOrder([("docs/", .directory), ("docs/a.txt", .file), ("docs/b/c.txt", .file)], nil)
    }

    @Test("a directory declared twice is a duplicate")
    func directoryTwice() {
        expectSameInEveryOrder([("docs/", .directory), ("docs/", .directory)], .duplicatePath)
    }

    @Test("distinct names do not collide")
    func distinct() {
        expectSameInEveryOrder([("a", .file), ("b", .file), ("c/a", .file), ("c/b", .file)], nil)
    }
}

@Suite("Findings: the reported violation does not depend on the order found")
struct FindingsTests {
    @Test("whole-archive reasons outrank per-entry ones, and ties go to the smaller entry name")
    func precedence() {
        let unsafe = Violation(.unsafePath, "", entry: Array("b".utf8))
        let unsafeEarlier = Violation(.unsafePath, "", entry: Array("a".utf8))
        let total = Violation(.totalTooLarge, "")
        let orders = [[unsafe, unsafeEarlier, total], [total, unsafe, unsafeEarlier], [unsafeEarlier, total, unsafe]]
        for order in orders {
            var findings = Findings()
            order.forEach { findings.record($0) }
            expectEqual(findings.worst, total)
        }
        for order in [[unsafe, unsafeEarlier], [unsafeEarlier, unsafe]] {
            var findings = Findings()
            order.forEach { findings.record($0) }
            expectEqual(findings.worst, unsafeEarlier)
        }
    }
}

extension ConflictTrackerTests {
    @Test("ß, ẞ (U+1E9E) and ss collide, in every pairing and order")
    func sharpS() {
        for pair in [("ß.txt", "ẞ.txt"), ("ss.txt", "ẞ.txt"), ("ß.txt", "SS.txt"), ("ẞ.txt", "sS.txt")] {
            expectSameInEveryOrder([(pair.0, .file), (pair.1, .file)], .nameCollision)
        }
        expectSameInEveryOrder([("Straße/a", .file), ("STRAẞE/b", .file)], .nameCollision)
    }

    @Test("canonically equivalent spellings that folding alone would keep apart collide")
    func foldAfterDecomposition() {
        // U+0345 (class 240) folds to a base letter; the marks must be ordered first.
        expectSameInEveryOrder([("\u{3B1}\u{345}\u{301}", .file), ("\u{3B1}\u{301}\u{345}", .file)], .nameCollision)
        expectSameInEveryOrder([("\u{1FB4}", .file), ("\u{391}\u{301}\u{3B9}", .file)], .nameCollision)
    }
}
