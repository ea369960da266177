import AirlockTestSupport
import Foundation
import Testing

/// Only a decoder child that has taken its drop can give a verdict on it. Every
/// failure of the machinery on a child's start (a template that dies, a go-ahead
/// lost, a spawn refused, a child that exits just short of taking its drop)
/// defers the drop, which stays claimed and is retried with a fresh
/// child; none is quarantined, and every drop ends exactly once.
@Suite("Start faults: no honest drop is judged for a failure of the machinery", .serialized)
struct StartFaultTests {
    static let valid = Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip")
    static let memo = Binary.repository.appendingPathComponent("fixtures/keyed/memo-binary.plist")

    /// Drops a flood of valid archives and memos, runs `run --once` with the faults
    /// until a run defers nothing (a deferred drop is retried by the next run),
    /// and returns the events of every run and how many faults were injected.
    static func flood(_ sandbox: Sandbox, count: Int, environment: [String: String],
                      runs: Int = 12) throws -> (events: [Event], faults: Int, statuses: [Int32]) {
        let zip = try Data(contentsOf: valid), keyed = try Data(contentsOf: memo)
        for index in 0..<count {
            if index % 10 == 9 { try sandbox.drop(keyed, as: "memo-\(index).plist") } else { try sandbox.drop(zip, as: "drop-\(index).zip") }
        }
        var events: [Event] = [], faults = 0, statuses: [Int32] = []
        for _ in 0..<runs {
            let outcome = try sandbox.runOnce(environment: environment)
            events += outcome.events
            faults += outcome.stderr.components(separatedBy: "test fault").count - 1
            statuses.append(outcome.status)
            if outcome.status == 0 { break }
        }
        return (events, faults, statuses)
    }

    /// Each case: its name, the faults, and whether a fault reaches a drop's
    /// child (and so defers the drop). A template that dies before it reports its
    /// child costs no deferral: the drop's child is then started with posix_spawn.
    static let faults: [(String, [String: String], Bool)] = [
        ("a template killed while it forks", ["AIRLOCK_TEST_START_FAULT": "template-dies:9"], false),
        ("a go-ahead never sent", ["AIRLOCK_TEST_START_FAULT": "go-ahead-lost:4"], true),
        ("a spawn refused (EAGAIN)", ["AIRLOCK_TEST_START_FAULT": "spawn-refused:3", "AIRLOCK_TEST_DECODER_TEMPLATES": "off"], true),
        ("a child that exits just short of taking its drop", ["AIRLOCK_TEST_START_FAULT_EXIT": "5"], true),
        ("every fault at once, templates recycled every 3 children",
         ["AIRLOCK_TEST_START_FAULT": "template-dies:17,go-ahead-lost:7,spawn-refused:11",
          "AIRLOCK_TEST_START_FAULT_EXIT": "9", "AIRLOCK_TEST_TEMPLATE_CHILDREN": "3"], true),
    ]

    @Test("a fault on the start path defers the drop; every drop is accepted exactly once, none quarantined",
          arguments: faults)
    func faultDefers(_ name: String, _ environment: [String: String], _ defers: Bool) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["workers": 4])
        // 60 drops (every tenth a keyed memo) are enough for each case to inject
        // its faults several times (6 to 28 a case, 19 with every fault at once);
        // the number proves no limit, and each drop costs a child's start.
        let count = 60
        let (events, faults, statuses) = try Self.flood(sandbox, count: count, environment: environment)
        let deferred = events.filter { $0.kind == .deferred }
        let accepted = events.filter { $0.kind == .accepted }
        print("start faults (\(name)): \(count) drops, \(faults) faults injected, \(deferred.count) deferrals, "
              + "\(accepted.count) accepted, runs \(statuses)")
        expect(faults > 0, "no fault was injected: the test proves nothing")
        if defers { expect(deferred.count > 0) }
        expect(events.filter { $0.kind == .rejected }.isEmpty, "a drop was judged for a fault of the machinery")
        expectEqual(statuses.last, 0, "drops were still deferred after \(statuses.count) runs")
        expectEqual(Set(accepted.compactMap { $0.drop }).count, count)
        expectEqual(accepted.count, count, "a drop was accepted more than once")
        try expect(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).isEmpty)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, count)
        for event in deferred {
            expectEqual((event.detail).map { $0.contains("before it took the drop") || $0.contains("posix_spawn") }, true,
                    "\(event)")
        }
        try sandbox.expectInvariants()
    }
}
