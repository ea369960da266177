@testable import AirlockRoot
import AirlockTestSupport
import Foundation
import Testing

/// The run lock's line, one type written and read.
@Suite("The run lock: typed, and the line reads back")
struct RunLockLineTests {
    @Test("the run lock's line reads back; a field of the wrong type is left out, not the rest")
    func runLockLine() throws {
        let holder = RunLock.Holder(running: true, pid: 4242, startedAt: "2026-11-30T01:00:00.000Z", mode: "daemon")
        expectEqual(holder.line, #"{"pid":4242,"started_at":"2026-11-30T01:00:00.000Z","mode":"daemon"}"#)
        let read = try JSONDecoder().decode(RunLock.Holder.self, from: Data(holder.line.utf8))
        expect(read.pid == 4242 && read.startedAt == holder.startedAt && read.mode == "daemon" && !read.running)
        let odd = try JSONDecoder().decode(RunLock.Holder.self, from: Data(#"{"pid":"4242","mode":"once"}"#.utf8))
        expect(odd.pid == nil && odd.mode == "once")
    }
}
