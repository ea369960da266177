@testable import AirlockDecoders
import AirlockSystem
import AirlockTestSupport
import Testing

@Suite("The daemon's registry of running decoders: abandoning kills through pidfds, and only children still registered")
struct RunningDecodersTests {
    static func sleeper() throws -> ChildProcess {
        try ChildProcess.spawn("/bin/sleep", arguments: ["30"], environment: [], descriptors: [.nullInput(0), .nullOutput(1)])
    }

    @Test func abandoningKillsARunningChildAndMarksItAbandoned() throws {
        let children = RunningDecoders()
        let child = try Self.sleeper()
        defer { child.close() }
        expect(children.started(child))
        expectEqual(children.count, 1)
        children.abandonAll()
        try expectEqual(child.wait().termination, .signalled(Signal.kill.rawValue))
        expect(children.finished(child))
        expectEqual(children.count, 0)
    }

    @Test func aChildStartedAfterAbandoningIsKilledAtOnce() throws {
        let children = RunningDecoders()
        children.abandonAll()
        let child = try Self.sleeper()
        defer { child.close() }
        expect(!children.started(child))
        expectEqual(children.count, 0)
        try expectEqual(child.wait().termination, .signalled(Signal.kill.rawValue))
        expect(children.finished(child))
    }

    @Test func aChildForgottenBeforeAbandoningIsLeftAlone() throws {
        let children = RunningDecoders()
        let child = try Self.sleeper()
        defer { child.close() }
        expect(children.started(child))
        expect(!children.finished(child))
        children.abandonAll()
        // Still running: abandoning did not reach it.
        expect(child.signal(.terminate))
        try expectEqual(child.wait().termination, .signalled(Signal.terminate.rawValue))
    }

    @Test func aReapedChildStillRegisteredIsNotSignalledByAbandoning() throws {
        let children = RunningDecoders()
        let child = try ChildProcess.spawn("/bin/true", arguments: [], environment: [], descriptors: [.nullInput(0), .nullOutput(1)])
        defer { child.close() }
        expect(children.started(child))
        try expectEqual(child.wait().termination, .exited(0))
        // Between the wait and `finished` the pid is free for reuse; the kill goes
        // through the pidfd, which names only the exited child, and reaches nobody.
        children.abandonAll()
        expect(!child.signal(.kill))
        expect(children.finished(child))
    }
}
