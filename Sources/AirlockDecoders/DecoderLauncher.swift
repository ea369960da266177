import AirlockChild
import AirlockSystem
import Synchronization

/// Decoder children started ahead of need, so that a drop's child has already
/// been executed and loaded when the drop is claimed.
///
/// At most one child waits per worker thread and per decoder program, and each
/// decodes exactly one drop: it is taken out of the launcher when its drop is
/// handed over, and another is started for the next one. A waiting child has
/// read nothing and is not yet confined; it receives its arguments and the
/// drop, staging and result descriptors in one message, puts them in place,
/// acknowledges, and only then takes the same path as a freshly started child:
/// confinement (its CPU limit counting from the hand-over), then the drop.
///
/// Children are kept per thread because the parent-death signal, which a
/// waiting child sets before anything else, follows the thread that started
/// it: a child is only ever handed a drop by the thread that will wait for it,
/// as a freshly started one is. A child whose thread has exited is dead, and
/// its hand-over fails.
///
/// Whatever goes wrong with a waiting child (it died, the message could not be
/// sent, no acknowledgement came) ends it through its pidfd, and the drop's
/// child is started fresh.
public final class DecoderLauncher: Sendable {
    private struct Key: Hashable {
        let executable: String
        let thread: UInt
    }

    private typealias Waiting = SocketChild

    private struct State {
        var waiting: [Key: Waiting] = [:]
        var stopped = false
    }

    private let state = Mutex(State())

    /// How long a waiting child may take to acknowledge its hand-over before it
    /// is given up on; it is blocked in recvmsg, so it normally answers at once.
    static let acknowledgementNanoseconds: UInt64 = 5_000_000_000

    public init() {}

    /// Starts a child of `executable` for this thread's next drop, unless one is
    /// waiting already or the launcher has stopped. A failure to start only means
    /// that the next drop starts its own child.
    func prepare(_ executable: String, environment: [String]) {
        let key = Key(executable: executable, thread: CurrentThread.id)
        guard state.withLock({ !$0.stopped && $0.waiting[key] == nil }) else { return }
        endExited()
        guard let waiting = try? Self.start(executable, environment: environment) else { return }
        let kept = state.withLock { state in
            guard !state.stopped, state.waiting[key] == nil else { return false }
            state.waiting[key] = waiting
            return true
        }
        if !kept { waiting.end() }
    }

    /// Hands a drop to this thread's waiting child of `executable`: that child,
    /// now running with `arguments` and `descriptors` (the drop, the staging
    /// directory, the result pipe); nil when none was waiting or the hand-over
    /// failed, in which case the child has been killed and reaped.
    func handOver(_ executable: String, arguments: [String], descriptors: [FileDescriptor]) -> ChildProcess? {
        let key = Key(executable: executable, thread: CurrentThread.id)
        guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: key) }) else { return nil }
        if StartFault.handOverLost.fails() { waiting.child.signal(.kill) }
        do {
            try waiting.socket.send(HandOverMessage(arguments: arguments).encoded, passing: descriptors)
            let deadline = monotonicNanoseconds() + Self.acknowledgementNanoseconds
            if try waiting.socket.reply(until: deadline) == WarmStart.acknowledgement { return waiting.child }
        } catch {
            // Handled below like a missing acknowledgement: the drop gets a fresh child.
        }
        waiting.end()
        return nil
    }

    /// Kills and reaps every waiting child, and starts none from now on.
    public func stop() {
        let all = state.withLock { state in
            state.stopped = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        all.forEach { $0.end() }
    }

    /// Kills and reaps every waiting child, and goes on starting new ones: the
    /// decoder program on disk is not the one they were started from.
    public func replaceAll() {
        let all = state.withLock { state in
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        all.forEach { $0.end() }
    }

    /// Ends the waiting children that have exited, taken by the end of the thread
    /// that started them: that thread will never ask for them, and they would stay
    /// zombies until the daemon stops.
    private func endExited() {
        let exited = state.withLock { state in
            let gone = state.waiting.filter { $0.value.hasExited(ifUnknown: false) }
            for key in gone.keys { state.waiting[key] = nil }
            return Array(gone.values)
        }
        exited.forEach { $0.end() }
    }

    /// The pid of this thread's waiting child of `executable`, for tests.
    func waitingChild(_ executable: String) -> Int32? {
        state.withLock { $0.waiting[Key(executable: executable, thread: CurrentThread.id)]?.child.pid }
    }

    /// How many children are waiting, for tests.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// A child of `executable` started with only the hand-over flag.
    private static func start(_ executable: String, environment: [String]) throws(SystemError) -> Waiting {
        try SocketChild.start(executable, arguments: [WarmStart.flag], environment: environment) {
            (executable, arguments, environment, descriptors) throws(SystemError) in
            try ChildProcess.spawn(executable, arguments: arguments, environment: environment, descriptors: descriptors)
        }
    }
}
