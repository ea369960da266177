import AirlockSystem
import Dispatch
import Synchronization

/// SIGTERM/SIGINT (stop) and SIGHUP (reload), turned into flags the dispatcher
/// reads between steps; each signal also wakes it.
/// Used from the dispatcher thread only; the handlers share only the flags.
final class SignalRequests {
    private struct Requested {
        var stop = false
        var reload = false
    }

    /// The one thing the handlers, on dispatch's threads, touch.
    private final class Flags: Sendable {
        let requested = Mutex(Requested())
    }

    private let flags = Flags()
    /// Kept so the sources stay installed.
    private var sources: [DispatchSourceSignal] = []

    /// Ignores the signals first, then handles them through dispatch sources, so a
    /// signal that arrives in between is not fatal. SIGIO would be sent if a writer
    /// opened a file while the watcher briefly held its read lease: it stays ignored.
    func install(wake: @escaping @Sendable () -> Void) {
        for signal in [Signal.terminate, .interrupt, .hangup, .io] { signal.ignore() }
        for signal in [Signal.terminate, .interrupt, .hangup] {
            let source = DispatchSource.makeSignalSource(signal: signal.rawValue, queue: .global())
            source.setEventHandler { [flags] in
                flags.requested.withLock { if signal == .hangup { $0.reload = true } else { $0.stop = true } }
                wake()
            }
            source.resume()
            sources.append(source)
        }
    }

    var stopRequested: Bool { flags.requested.withLock { $0.stop } }

    /// Whether a reload was asked for since the last call.
    func takeReload() -> Bool {
        flags.requested.withLock { requested in
            defer { requested.reload = false }
            return requested.reload
        }
    }
}
