@testable import AirlockDecoders
import AirlockEvents
import AirlockSystem
import AirlockTestSupport
import Dispatch
import Foundation
import Testing

/// `state/decoder-confinement` is written by the start-up probe's thread and by
/// workers reporting their children, at once: what the file holds must be what
/// the process holds, and the probe's late answer must not replace a child's.
/// Serialized: the recorded state is one per process.
@Suite("The decoders' recorded confinement: one writer at a time, a late probe replaces no child's report", .serialized)
struct ConfinementRecordTests {
    static let full = DecoderConfinementState(landlock: "in-force", seccomp: "in-force", landlockABI: 4, problems: "", required: true)
    static let partial = DecoderConfinementState(landlock: "not-offered", seccomp: "in-force", landlockABI: 0,
                                                 problems: "Landlock: not offered", required: true)

    static func withState(_ body: (FileDescriptor, URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("airlock-confinement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = try FileDescriptor.openDirectory(path: directory.path)
        defer { state.close() }
        try body(state, directory)
    }

    @Test func aProbeAnsweringAfterAChildsReportLeavesTheChildsState() throws {
        try Self.withState { state, _ in
            DecoderConfinementState.record(Self.partial, log: Log(), state: state)
            DecoderConfinementState.record(Self.full, log: Log(), state: state, unlessObserved: true)
            expectEqual(DecoderConfinementState.current, Self.partial)
            expectEqual(DecoderConfinementState.recorded(in: state), Self.partial)
        }
    }

    @Test func recordsFromManyThreadsLeaveTheFileAsTheProcessHoldsItAndNoTemporaryFile() throws {
        try Self.withState { state, directory in
            DispatchQueue.concurrentPerform(iterations: 400) { index in
                DecoderConfinementState.record(index % 2 == 0 ? Self.full : Self.partial, log: Log(), state: state,
                                               unlessObserved: index % 7 == 0)
            }
            expectEqual(DecoderConfinementState.recorded(in: state), DecoderConfinementState.current)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            expectEqual(left, ["decoder-confinement"])
        }
    }
}
