import AirlockTestSupport
import AirlockWatcher
import Testing

@Suite("Inbox tracker: a renamed name is due at once, a closed-after-write one after the settle interval")
struct InboxTrackerTests {
    let settle: UInt64 = 500

    /// The names `decide` is shown at `now`, each answered with `answer`.
    func due(_ tracker: inout InboxTracker, at now: UInt64, answer: InboxTracker.Decision = .done,
             room: Int = .max) -> [String] {
        var seen: [String] = []
        tracker.visitDue(now: now, while: { seen.count < room }) { name, _ in
            seen.append(String(decoding: name, as: UTF8.self))
            return answer
        }
        return seen
    }

    @Test func renamedNameIsDueAtOnce() {
        var tracker = InboxTracker(settle: settle)
        tracker.noteEvent(Array("a.zip".utf8), renamed: true, now: 1000)
        expectEqual(due(&tracker, at: 1000), ["a.zip"])
        expect(tracker.isEmpty)
    }

    @Test func closedAfterWriteSettlesFromItsLatestEvent() {
        var tracker = InboxTracker(settle: settle)
        tracker.noteEvent(Array("b.zip".utf8), renamed: false, now: 1000)
        expect(due(&tracker, at: 1499).isEmpty)
        // The writer closed and reopened: the interval starts again.
        tracker.noteEvent(Array("b.zip".utf8), renamed: false, now: 1400)
        expect(due(&tracker, at: 1500).isEmpty)
        expect(due(&tracker, at: 1899).isEmpty)
        expectEqual(due(&tracker, at: 1900), ["b.zip"])
    }

    @Test func writeAfterRenameSettlesAgain() {
        var tracker = InboxTracker(settle: settle)
        tracker.noteEvent(Array("c.zip".utf8), renamed: true, now: 1000)
        tracker.noteEvent(Array("c.zip".utf8), renamed: false, now: 1010)
        expect(due(&tracker, at: 1010).isEmpty)
        expectEqual(due(&tracker, at: 1510), ["c.zip"])
    }

    @Test func aNameToldToWaitKeepsItsPlace() {
        var tracker = InboxTracker(settle: settle)
        tracker.noteEvent(Array("first".utf8), renamed: true, now: 0)
        tracker.noteEvent(Array("second".utf8), renamed: true, now: 1)
        expectEqual(due(&tracker, at: 1, answer: .waitUntil(600)), ["first", "second"])
        expectEqual(tracker.count, 2)
        expectEqual(tracker.earliestDue, 600)
        expect(due(&tracker, at: 599).isEmpty)
        expectEqual(due(&tracker, at: 600, room: 1), ["first"])
        expectEqual(due(&tracker, at: 600), ["second"])
        expect(tracker.isEmpty)
    }

    @Test func listedNamesSettleUnlessThereAtStart() {
        var tracker = InboxTracker(settle: settle)
        tracker.noteListed([Array("old".utf8)], now: 0, atStart: true)
        tracker.noteListed([Array("old".utf8), Array("late".utf8)], now: 10, atStart: false)
        expectEqual(tracker.entry(Array("old".utf8))?.due, 0)
        expectEqual(tracker.entry(Array("late".utf8))?.due, 510)
        expectEqual(due(&tracker, at: 10), ["old"])
        tracker.removeAll()
        expect(tracker.isEmpty && tracker.earliestDue == nil)
    }

    @Test("a listed name seen written in place stops waiting; a renamed one keeps its place")
    func writtenInPlaceAfterListing() {
        var tracker = InboxTracker(settle: settle)
        tracker.noteListed([Array("listed".utf8), Array("moved".utf8)], now: 0, atStart: false)
        tracker.noteEvent(Array("moved".utf8), renamed: true, now: 5)
        tracker.forgetUnlessRenamed(Array("listed".utf8))
        tracker.forgetUnlessRenamed(Array("moved".utf8))
        expectEqual(tracker.entry(Array("listed".utf8)), nil)
        expectEqual(due(&tracker, at: 1_000), ["moved"])
        expect(tracker.isEmpty)
    }
}
