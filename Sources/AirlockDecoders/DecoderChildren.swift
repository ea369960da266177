import AirlockSystem
import Synchronization

/// The decoder children running now, so that a stopping daemon can kill the ones
/// still busy when its grace period ends. Their drops are then abandoned, not
/// judged: they stay claimed for the next start.
///
/// Children are held by their pidfds (`ChildProcess`), never by pid: a child that
/// exits and is reaped between `abandonAll` looking at it and signalling it cannot
/// have its pid reused under the signal.
public final class DecoderChildren: Sendable {
    private struct State {
        var running: [ObjectIdentifier: ChildProcess] = [:]
        var abandoning = false
        var abandoned: Set<ObjectIdentifier> = []
    }

    private let state = Mutex(State())

    /// The children waiting for a drop; the daemon stops it when it stops taking drops.
    public let launcher = DecoderLauncher()

    /// The templates that fork each drop's child; stopped, like the launcher, when no more drops come.
    public let templates = DecoderTemplates()

    /// Ends the templates and the waiting children: no more drops come.
    public func stopStarting() {
        templates.stop()
        launcher.stop()
    }

    public init() {}

    /// Ends the templates and the waiting children, to be started again from the
    /// decoder programs now on disk: a child spoke another version than this build.
    func replaceStarted() {
        templates.replaceAll()
        launcher.replaceAll()
    }

    /// Records a started child; false (and the child killed) once abandoning began.
    func started(_ child: ChildProcess) -> Bool {
        state.withLock { state in
            guard !state.abandoning else {
                child.signal(.kill)
                state.abandoned.insert(ObjectIdentifier(child))
                return false
            }
            state.running[ObjectIdentifier(child)] = child
            return true
        }
    }

    /// Forgets a child (reaped, or given up on); true when it was killed by `abandonAll`.
    func finished(_ child: ChildProcess) -> Bool {
        state.withLock { state in
            state.running[ObjectIdentifier(child)] = nil
            return state.abandoned.remove(ObjectIdentifier(child)) != nil
        }
    }

    /// Kills every running child and every child started from now on.
    public func abandonAll() {
        state.withLock { state in
            state.abandoning = true
            for (id, child) in state.running {
                child.signal(.kill)
                state.abandoned.insert(id)
            }
        }
    }

    public var count: Int {
        state.withLock { $0.running.count }
    }
}
