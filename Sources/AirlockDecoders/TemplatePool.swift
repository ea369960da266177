import AirlockChild
import AirlockSystem
import Foundation
import Synchronization

/// The supervisor's decoder templates: one running decoder program per program and set of
/// start-up arguments (the magic database), which has loaded everything that
/// does not depend on a drop and forks each drop's child (`TemplateServer`).
/// The child is this process's own (waited for, measured and killed through its
/// pidfd like any other), decodes one drop and exits; it is never reused.
///
/// A template is started when first needed, by `TemplateStarter`'s thread, and
/// serves one request at a time: the worker threads that want a child of the
/// same program take turns on its socket (a fork takes well under a
/// millisecond). A template that has died is replaced at the next request; one
/// that misbehaves (no well-formed reply in time) is killed, and the drop's
/// child is started with `posix_spawn`. One that fails before its first child is not
/// started again for `retryNanoseconds`, so a program that cannot run as a
/// template costs each drop nothing.
///
/// Every child of one template is a copy of the same process: they share its
/// address-space layout (ASLR), its stack-protector canary and the Swift
/// runtime's hashing seed, which a child that learned them could tell the
/// exploit of a later drop. A template therefore forks at most `maxChildren`
/// children and is then replaced, as a fresh process with fresh ones.
public final class TemplatePool: Sendable {
    struct Key: Hashable, Sendable {
        let executable: String
        let startUp: [String]
    }

    /// A running template and how many children it has forked. It holds nothing
    /// at 0, 1 and the drop's three descriptor numbers, and its end of a socket
    /// pair at `TemplateServer.socketDescriptor`; the supervisor keeps the other end.
    final class Template: Sendable {
        let child: ChildProcess
        let socket: HandOverSocket
        let forked = Atomic(0)

        private init(child: ChildProcess, socket: HandOverSocket) {
            self.child = child
            self.socket = socket
        }

        /// Starts `executable` with `arguments` on the starter's thread.
        static func start(_ executable: String, arguments: [String], environment: [String]) throws(SystemError) -> Template {
            let (mine, theirs) = try HandOverSocket.pair()
            // Our copy of the template's end closes when `theirs` goes, at the end of
            // this scope: the template is then its only holder, and a supervisor that
            // dies leaves it reading end-of-file.
            let child = try TemplateStarter.shared.spawn(
                executable, arguments: arguments, environment: environment,
                descriptors: [.nullInput(0), .nullOutput(1),
                              .nullInput(Confinement.dropDescriptor.rawValue), .nullInput(Confinement.stagingDescriptor.rawValue),
                              .nullInput(Confinement.resultDescriptor.rawValue),
                              .inherit(theirs.descriptor, as: TemplateServer.socketDescriptor.rawValue)])
            return Template(child: child, socket: mine)
        }

        /// Whether the template has exited (its pidfd polls readable then); one
        /// whose state cannot be polled counts as gone, and is replaced.
        var hasExited: Bool {
            guard let pidfd = child.descriptorNumber else { return true }
            return (try? waitReadable(FileDescriptor(rawValue: pidfd), milliseconds: 0)) ?? true
        }

        /// Kills and reaps the template; its children, this process's own, live on.
        func end() {
            child.signal(.kill)
            _ = try? child.wait()
            child.close()
        }
    }

    /// A key's template, if one runs, and when to try again after one failed.
    struct Slot {
        var template: Template?
        /// Started `successorLead` children before `template` forks its last,
        /// so that it has loaded by the time it takes over.
        var successor: Template?
        var retryAfter: UInt64 = 0
        /// Whether `template` was the successor: one that died while it waited
        /// is found only when its first request fails.
        var templateWasSuccessor = false
    }

    final class SlotLock: Sendable {
        let slot = Mutex(Slot())
    }

    private struct State {
        var slots: [Key: SlotLock] = [:]
        var stopped = false
    }

    private let state = Mutex(State())

    /// The most children one template forks before it is replaced.
    static let maxChildren: Int = {
        #if DEBUG
        // Test-only: recycling after a few children instead of 256.
        if let text = ProcessInfo.processInfo.environment["AIRLOCK_TEST_TEMPLATE_CHILDREN"], let count = Int(text) { return count }
        #endif
        return 256
    }()

    /// Whether drops' children come from templates at all: always in a release
    /// build; a debug build's tests turn them off to reach the other ways.
    static let enabled: Bool = {
        #if DEBUG
        return ProcessInfo.processInfo.environment["AIRLOCK_TEST_DECODER_TEMPLATES"] != "off"
        #else
        return true
        #endif
    }()
    /// How many children before a template's last its successor is started:
    /// at hundreds of drops a second, tens of milliseconds ahead, about what a
    /// template takes to load.
    static let successorLead: Int = 32
    /// How long a template may take to answer a request, its start-up included on the first.
    static let replyNanoseconds: UInt64 = 10_000_000_000
    /// How long a program whose template failed before its first child runs without one.
    static let retryNanoseconds: UInt64 = 30_000_000_000

    /// The bounds this pool applies: `maxChildren` and `successorLead` but in tests.
    private let childrenPerTemplate: Int
    private let lead: Int

    public convenience init() {
        self.init(maxChildren: Self.maxChildren, successorLead: Self.successorLead)
    }

    init(maxChildren: Int, successorLead: Int) {
        childrenPerTemplate = maxChildren
        lead = successorLead
    }

    /// A child of `executable` forked by its template for `startUp`, running with
    /// `arguments` and `descriptors` (the drop, the staging directory, the result
    /// pipe); nil when no template can give one now (the templates stopped, one
    /// failed to start or to answer), and the drop's child is started with posix_spawn.
    func fork(_ executable: String, startUp: [String], environment: [String], arguments: [String],
              descriptors: [FileDescriptor]) -> ChildProcess? {
        guard Self.enabled else { return nil }
        let key = Key(executable: executable, startUp: startUp)
        guard let lock = slot(for: key) else { return nil }
        return lock.slot.withLock { slot -> ChildProcess? in
            for attempt in 1...2 {
                guard let template = current(&slot, key, environment: environment) else { return nil }
                let request = TemplateRequest(socket: template.socket, deadline: monotonicNanoseconds() + Self.replyNanoseconds,
                                              templateFault: { template.child.signal(.kill) })
                if let child = request.fork(arguments: arguments, descriptors: descriptors) {
                    count(child: template, in: &slot, key, environment: environment)
                    return child
                }
                let unused = template.forked.load(ordering: .relaxed) == 0
                template.end()
                slot.template = nil
                // A successor that died while it waited (its exit not yet seen when
                // it took over) is replaced by a fresh start for this request; a
                // fresh template that gives no child is waited out.
                guard unused, slot.templateWasSuccessor, attempt == 1 else {
                    if unused { slot.retryAfter = monotonicNanoseconds() + Self.retryNanoseconds }
                    return nil
                }
            }
            return nil
        }
    }

    /// Counts a child `template` forked: a template that has forked its last is
    /// replaced by its successor, and one nearing it has its successor started.
    private func count(child template: Template, in slot: inout Slot, _ key: Key, environment: [String]) {
        let forked = template.forked.add(1, ordering: .relaxed).newValue
        if forked >= childrenPerTemplate {
            template.end()
            slot.template = nil
            _ = promoteSuccessor(&slot)
        } else if forked >= childrenPerTemplate - lead, slot.successor == nil, !state.withLock({ $0.stopped }) {
            // Started now, while this one still serves: a template replaced
            // only when the next request came made that request, and every
            // worker waiting behind it, wait for a whole start-up.
            slot.successor = try? Self.start(key, environment: environment)
        }
    }

    /// Starts the template for `executable` and `startUp` now, if none runs, so
    /// that its loading overlaps whatever comes before the first drop's request;
    /// it does not wait for the template to be ready.
    package func prestart(_ executable: String, startUp: [String], environment: [String]) {
        guard Self.enabled else { return }
        let key = Key(executable: executable, startUp: startUp)
        guard let lock = slot(for: key) else { return }
        lock.slot.withLock { slot in _ = current(&slot, key, environment: environment) }
    }

    /// The slot for `key`, made on first use; nil once the templates are stopped.
    private func slot(for key: Key) -> SlotLock? {
        state.withLock { state -> SlotLock? in
            guard !state.stopped else { return nil }
            if let existing = state.slots[key] { return existing }
            let made = SlotLock()
            state.slots[key] = made
            return made
        }
    }

    /// The slot's running template, replacing one that has exited; nil when
    /// stopped, while a failed start is being waited out, or when none starts.
    private func current(_ slot: inout Slot, _ key: Key, environment: [String]) -> Template? {
        if let template = slot.template, template.hasExited {
            template.end()
            slot.template = nil
        }
        if let template = slot.template { return template }
        if let successor = promoteSuccessor(&slot) { return successor }
        guard !state.withLock({ $0.stopped }), monotonicNanoseconds() >= slot.retryAfter else { return nil }
        guard let started = try? Self.start(key, environment: environment) else {
            slot.retryAfter = monotonicNanoseconds() + Self.retryNanoseconds
            return nil
        }
        slot.template = started
        slot.templateWasSuccessor = false
        return started
    }

    /// Makes the slot's successor, if one waits and still runs, its template;
    /// one that has exited is reaped. The successor's place is empty after.
    private func promoteSuccessor(_ slot: inout Slot) -> Template? {
        guard let successor = slot.successor else { return nil }
        slot.successor = nil
        guard !successor.hasExited else {
            successor.end()
            return nil
        }
        slot.template = successor
        slot.templateWasSuccessor = true
        return successor
    }

    /// Ends every template and starts none from now on. Their children are
    /// this process's own and are not touched.
    public func stop() {
        endTemplates(state.withLock { state in
            state.stopped = true
            return Array(state.slots.values)
        })
    }

    /// Ends every running template, so that the next request starts a fresh one:
    /// after a configuration reload no template idles on a magic database that
    /// is no longer configured (nothing would ever ask it again), and a decoder
    /// program replaced on disk serves the next drop rather than the 257th. A
    /// program waiting out a failed start is tried again at once. Children
    /// already forked are this process's own and run on.
    public func replaceAll() {
        endTemplates(state.withLock { Array($0.slots.values) }, retryNow: true)
    }

    /// Ends the templates of `slots`, each under its slot's lock, so that a
    /// request in progress finishes first. The slots stay: a request holding one
    /// starts its template there, where `stop` and `replaceAll` find it.
    private func endTemplates(_ slots: [SlotLock], retryNow: Bool = false) {
        for lock in slots {
            lock.slot.withLock { slot in
                slot.template?.end()
                slot.template = nil
                slot.successor?.end()
                slot.successor = nil
                if retryNow { slot.retryAfter = 0 }
            }
        }
    }

    /// The pid of the template for `executable` and `startUp`, for tests.
    func templatePid(_ executable: String, startUp: [String]) -> Int32? {
        guard let lock = state.withLock({ $0.slots[Key(executable: executable, startUp: startUp)] }) else { return nil }
        return lock.slot.withLock { $0.template?.child.pid }
    }

    /// The pid of the successor started for `executable` and `startUp`, for tests.
    func successorPid(_ executable: String, startUp: [String]) -> Int32? {
        guard let lock = state.withLock({ $0.slots[Key(executable: executable, startUp: startUp)] }) else { return nil }
        return lock.slot.withLock { $0.successor?.child.pid }
    }

    /// A template of `key.executable` started, on the starter's thread, with
    /// `TemplateServer.flag` and the start-up arguments.
    private static func start(_ key: Key, environment: [String]) throws(SystemError) -> Template {
        // LD_BIND_NOW: the dynamic linker resolves every symbol once, in the
        // template, rather than each child resolving the ones it calls first.
        try Template.start(key.executable, arguments: [TemplateServer.flag] + key.startUp, environment: environment + ["LD_BIND_NOW=1"])
    }
}
