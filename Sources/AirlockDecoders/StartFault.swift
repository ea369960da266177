import AirlockSystem
import Foundation
import Synchronization

/// The steps of a decoder child's start between which the machinery can fail: a
/// debug build fails the step named in `AIRLOCK_TEST_START_FAULT` (a comma list of
/// `STEP:N`, each failing every Nth time that step is reached), so that a test can
/// check that none of these failures becomes a verdict on a drop. Each injected
/// fault says `airlock: test fault STEP` on standard error, for the test to count.
/// Release builds compile `fails()` to false; a drop's bytes cannot select a step.
enum StartFault: String, CaseIterable {
    /// A template's request is sent and the template is killed before it replies.
    case templateDies = "template-dies"
    /// A template's child is reported but never given its go-ahead.
    case goAheadLost = "go-ahead-lost"
    /// The child started ahead of need is killed before its hand-over.
    case handOverLost = "hand-over-lost"
    /// Starting a child fails as fork and clone do on a host out of processes (EAGAIN).
    case spawnRefused = "spawn-refused"

    #if DEBUG
    private static let every: [StartFault: Int] = {
        guard let text = ProcessInfo.processInfo.environment["AIRLOCK_TEST_START_FAULT"] else { return [:] }
        var found: [StartFault: Int] = [:]
        for item in text.split(separator: ",") {
            let parts = item.split(separator: ":")
            guard parts.count == 2, let step = StartFault(rawValue: String(parts[0])), let n = Int(parts[1]), n > 0 else { continue }
            found[step] = n
        }
        return found
    }()
    private static let reached = Mutex([StartFault: Int]())
    #endif

    /// Whether this step fails now (debug builds only).
    func fails() -> Bool {
        #if DEBUG
        guard let n = Self.every[self] else { return false }
        let count = Self.reached.withLock { reached -> Int in
            reached[self, default: 0] += 1
            return reached[self]!
        }
        guard count % n == 0 else { return false }
        try? FileDescriptor(rawValue: 2).writeAll(Array("airlock: test fault \(rawValue)\n".utf8))
        return true
        #else
        return false
        #endif
    }
}
