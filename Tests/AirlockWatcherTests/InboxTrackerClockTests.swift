import AirlockConfiguration
import AirlockIntake
import AirlockSystem
import AirlockTestSupport
@testable import AirlockWatcher
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock the daemon reads, as a value the test moves by hand.
private struct FakeClock {
    var now: UInt64 = 1_000_000_000

    mutating func advance(milliseconds: UInt64) { now += milliseconds * 1_000_000 }
    mutating func advance(seconds: UInt64) { now += seconds * 1_000_000_000 }
}

private let ms: UInt64 = 1_000_000
private let s: UInt64 = 1_000_000_000

/// The daemon's walk over the due names at `clock.now`, each answered by `check`
/// the way its completion check would: what became of each name looked at.
private func walk(_ tracker: inout InboxTracker, _ clock: FakeClock, maxWait: UInt64,
                  check: (String) -> CompletionCheck.Readiness) -> [String: InboxTracker.Step] {
    var steps: [String: InboxTracker.Step] = [:]
    let settle = tracker.settle
    tracker.visitDue(now: clock.now, while: { true }) { raw, entry in
        let name = String(decoding: raw, as: UTF8.self)
        let step = InboxTracker.step(after: check(name), entry, now: clock.now, settle: settle, maxWait: maxWait)
        steps[name] = step
        if case .look(let time) = step { return .waitUntil(time) }
        return .done
    }
    return steps
}

@Suite("Inbox tracker with a fake clock: settle, max wait, backoff and vanishing names")
struct InboxTrackerClockTests {
    @Test("a name still written is looked at again each settle interval, and claimed once its writer is gone")
    func settlesWhileWritten() {
        var clock = FakeClock()
        var tracker = InboxTracker(settle: 500 * ms)
        tracker.noteEvent(Array("a.zip".utf8), renamed: false, now: clock.now)
        clock.advance(milliseconds: 499)
        expect(walk(&tracker, clock, maxWait: 600 * s) { _ in .ready }.isEmpty, "not due before the settle interval")
        clock.advance(milliseconds: 1)
        expectEqual(walk(&tracker, clock, maxWait: 600 * s) { _ in .writerActive }, ["a.zip": .look(at: clock.now + 500 * ms)])
        clock.advance(milliseconds: 499)
        expect(walk(&tracker, clock, maxWait: 600 * s) { _ in .ready }.isEmpty)
        clock.advance(milliseconds: 1)
        expectEqual(walk(&tracker, clock, maxWait: 600 * s) { _ in .ready }, ["a.zip": .claim(overdue: false)])
        expect(tracker.isEmpty)
    }

    @Test("a writer that never lets go delays a name max wait from when it was first seen, whatever events follow")
    func maxWaitFromFirstSeen() throws {
        var clock = FakeClock()
        let first = clock.now
        var tracker = InboxTracker(settle: 500 * ms)
        let name = Array("busy.zip".utf8)
        tracker.noteEvent(name, renamed: false, now: first)
        clock.advance(milliseconds: 5200)
        tracker.noteEvent(name, renamed: false, now: clock.now)  // wrote again, and holds the file open since
        expectEqual(tracker.entry(name)?.firstSeen, first, "events do not restart the wait")
        var looks = 0
        var last: InboxTracker.Step?
        for _ in 0..<100 {
            clock.now = try #require(tracker.earliestDue)
            last = walk(&tracker, clock, maxWait: 10 * s) { _ in .writerActive }["busy.zip"]
            guard case .look = last else { break }
            looks += 1
        }
        expectEqual(last, .claim(overdue: true))
        expectEqual(looks, 9, "looked at 5.7 s, 6.2 s, ... 9.7 s")
        expectEqual(clock.now, first + 10 * s + 200 * ms, "taken at the first look past max wait")
        expect(tracker.isEmpty)
    }

    @Test("max wait is inclusive, and a max wait past the clock's range never overflows into a claim")
    func maxWaitBoundary() {
        let entry = InboxTracker.Entry(firstSeen: 1000, due: 1000, lastSeen: nil)
        expectEqual(InboxTracker.step(after: .writerActive, entry, now: 1999, settle: 5, maxWait: 1000), .look(at: 2004))
        expectEqual(InboxTracker.step(after: .writerActive, entry, now: 2000, settle: 5, maxWait: 1000), .claim(overdue: true))
        expectEqual(InboxTracker.step(after: .writerActive, entry, now: .max - 10, settle: 5, maxWait: .max), .look(at: .max - 5))
        expectEqual(InboxTracker.step(after: .ready, entry, now: 1000, settle: 5, maxWait: 0), .claim(overdue: false))
        expectEqual(InboxTracker.step(after: .notRegular, entry, now: 1000, settle: 5, maxWait: .max), .claim(overdue: false))
    }

    @Test("a name that vanished is forgotten, and one that comes back waits from its return")
    func vanishingNames() {
        var clock = FakeClock()
        var tracker = InboxTracker(settle: 500 * ms)
        tracker.noteEvent(Array("gone.zip".utf8), renamed: true, now: clock.now)
        tracker.noteEvent(Array("kept.zip".utf8), renamed: true, now: clock.now)
        let steps = walk(&tracker, clock, maxWait: 600 * s) { $0 == "gone.zip" ? .vanished : .writerActive }
        expectEqual(steps, ["gone.zip": .forget, "kept.zip": .look(at: clock.now + 500 * ms)])
        expect(tracker.count == 1 && tracker.entry(Array("gone.zip".utf8)) == nil)
        clock.advance(seconds: 700)
        tracker.noteEvent(Array("gone.zip".utf8), renamed: false, now: clock.now)
        expectEqual(tracker.entry(Array("gone.zip".utf8))?.firstSeen, clock.now)
        clock.advance(milliseconds: 500)
        expectEqual(walk(&tracker, clock, maxWait: 600 * s) { _ in .writerActive }, ["gone.zip": .look(at: clock.now + 500 * ms), "kept.zip": .claim(overdue: true)])
    }

    @Test("the completion check finds a removed name vanished and a directory not regular")
    func completionCheckOnDisk() throws {
        let (path, inbox) = try Self.makeInbox()
        defer { Self.remove(path, inbox) }
        var check = CompletionCheck(rule: .lease, log: { _ in })
        var entry = InboxTracker.Entry(firstSeen: 0, due: 0, lastSeen: nil)
        let temporary: ([UInt8]) -> Bool = { TemporaryNames.matches($0, TemporaryNames.defaultPatterns) }
        expectEqual(check.check(Array("never-there.zip".utf8), in: inbox, entry: &entry, isTemporary: temporary), .vanished)
        try inbox.makeDirectory(Array("sub".utf8), mode: 0o700)
        defer { try? inbox.removeDirectory(Array("sub".utf8)) }
        expectEqual(check.check(Array("sub".utf8), in: inbox, entry: &entry, isTemporary: temporary), .notRegular)
    }

    @Test("OpenSSH's legacy rename: a drop whose other link is a temporary name is a rename in progress, then ready once it is unlinked; a second link under a drop name is not regular")
    func linkedRename() throws {
        let (path, inbox) = try Self.makeInbox()
        defer { Self.remove(path, inbox) }
        try Data("PK".utf8).write(to: URL(fileURLWithPath: path + "/x.zip.part"))
        expectEqual(link(path + "/x.zip.part", path + "/x.zip"), 0)
        var check = CompletionCheck(rule: .lease, log: { _ in })
        var entry = InboxTracker.Entry(firstSeen: 0, due: 0, lastSeen: nil)
        let temporary: ([UInt8]) -> Bool = { TemporaryNames.matches($0, TemporaryNames.defaultPatterns) }
        expectEqual(check.check(Array("x.zip".utf8), in: inbox, entry: &entry, isTemporary: temporary), .renameInProgress)
        expectEqual(InboxTracker.step(after: .renameInProgress, entry, now: s, settle: 500 * ms, maxWait: 600 * s), .look(at: s + 50 * ms))
        expectEqual(unlink(path + "/x.zip.part"), 0)
        expectEqual(check.check(Array("x.zip".utf8), in: inbox, entry: &entry, isTemporary: temporary), .ready)
        expectEqual(link(path + "/x.zip", path + "/y.zip"), 0)
        expectEqual(check.check(Array("x.zip".utf8), in: inbox, entry: &entry, isTemporary: temporary), .notRegular)
    }

    @Test("under the renamed rule a renamed name is ready at once, and a listed one once its status stood still")
    func renamedRule() throws {
        let (path, inbox) = try Self.makeInbox()
        defer { Self.remove(path, inbox) }
        try Data("PK".utf8).write(to: URL(fileURLWithPath: path + "/x.zip"))
        var check = CompletionCheck(rule: .renamed, log: { _ in })
        var renamed = InboxTracker.Entry(firstSeen: 0, due: 0, lastSeen: nil, renamed: true)
        var listed = InboxTracker.Entry(firstSeen: 0, due: 0, lastSeen: nil)
        let temporary: ([UInt8]) -> Bool = { _ in false }
        expectEqual(check.check(Array("x.zip".utf8), in: inbox, entry: &renamed, isTemporary: temporary), .ready)
        expectEqual(check.check(Array("x.zip".utf8), in: inbox, entry: &listed, isTemporary: temporary), .writerActive)
        expectEqual(check.check(Array("x.zip".utf8), in: inbox, entry: &listed, isTemporary: temporary), .ready)
    }

    @Test("a failed claim is looked at again a second and a settle interval later")
    func failedClaimBackoff() {
        expectEqual(InboxTracker.afterFailedClaim(now: 7 * s, settle: 500 * ms), 8 * s + 500 * ms)
    }

    @Test("a deferred drop is retried after 1, 2, 4 ... seconds, capped, and its count forgotten once it settles")
    func retryBackoff() {
        var clock = FakeClock()
        var retries = RetryScheduler()
        let ticket = ClaimTicket(id: "20261130T000000Z-0000abcd", dropName: Array("a.zip".utf8))
        var delays: [Int64] = []
        for _ in 0..<7 {
            let delay = retries.deferred(ticket, now: clock.now, maxSeconds: 30)
            delays.append(delay)
            clock.advance(seconds: UInt64(delay) - 1)
            expect(retries.takeDue(now: clock.now, limit: 10).isEmpty, "not due a second early")
            clock.advance(seconds: 1)
            expectEqual(retries.takeDue(now: clock.now, limit: 10), [ticket])
        }
        expectEqual(delays, [1, 2, 4, 8, 16, 30, 30])
        retries.settled(ticket.id)
        expectEqual(retries.deferred(ticket, now: clock.now, maxSeconds: 30), 1, "a settled drop starts again from one second")
    }

    @Test("due retries come out earliest first, at most the room there is; the doubling never overflows")
    func retryOrderAndCeiling() {
        var retries = RetryScheduler()
        let early = ClaimTicket(id: "early", dropName: []), late = ClaimTicket(id: "late", dropName: [])
        for _ in 0..<3 { _ = retries.deferred(late, now: 0, maxSeconds: .max) }  // 1, 2, then 4 s
        _ = retries.takeDue(now: 2 * s, limit: 10)
        _ = retries.deferred(early, now: 0, maxSeconds: .max)
        expect(retries.count == 2 && retries.earliestDue == s)
        expect(retries.takeDue(now: 10 * s, limit: 0).isEmpty)
        expectEqual(retries.takeDue(now: 10 * s, limit: 1), [early])
        expectEqual(retries.takeDue(now: 10 * s, limit: 1), [late])
        var many = RetryScheduler()
        var delay: Int64 = 0
        for _ in 0..<100 { delay = many.deferred(late, now: 0, maxSeconds: .max) }
        expectEqual(delay, 1 << 20, "the exponent stops at 20: about twelve days")
    }

    /// A new, randomly named inbox directory beneath /tmp and its descriptor.
    static func makeInbox() throws -> (String, FileDescriptor) {
        var template = Array("/tmp/airlock-inbox-test-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw Errno.current }
        let path = String(cString: template)
        do {
            return (path, try FileDescriptor.openDirectory(path: path))
        } catch {
            rmdir(path)
            throw error
        }
    }

    /// Closes the inbox and removes it with whatever a test left in it.
    static func remove(_ path: String, _ inbox: FileDescriptor) {
        inbox.close()
        _ = try? FileManager.default.removeItem(atPath: path)
    }
}
