import AirlockSystem
import Dispatch
import Foundation
import Synchronization

/// The one thread that starts decoder templates, which lives as long as the
/// process does.
///
/// A template's children are forked as the supervisor's own children, and the
/// kernel makes the thread that started the template their parent: their
/// parent-death signal (and the template's) fires when that thread exits, not
/// only when the process does. A worker thread, a pool thread or a short-lived
/// one would take every child of its templates with it; this thread never
/// exits, so they die with the supervisor and only with it.
final class TemplateStarter: Sendable {
    static let shared = TemplateStarter()

    private final class Request: Sendable {
        let executable: String
        let arguments: [String]
        let environment: [String]
        let descriptors: [ChildDescriptor]
        let answer = Mutex<Result<ChildProcess, SystemError>?>(nil)
        let done = DispatchSemaphore(value: 0)

        init(_ executable: String, _ arguments: [String], _ environment: [String], _ descriptors: [ChildDescriptor]) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
            self.descriptors = descriptors
        }
    }

    private let requests = Mutex<[Request]>([])
    private let pending = DispatchSemaphore(value: 0)
    /// Whether the thread runs; it is started by the first request, and by a
    /// later one when it could not be (a host out of tasks refuses threads too).
    private let running = Mutex(false)

    private init() {}

    /// Starts the thread unless it runs. - Throws: `pthread_create`'s refusal.
    private func ensureRunning() throws(SystemError) {
        let error = running.withLock { running -> SystemError? in
            guard !running else { return nil }
            let started = Result { () throws(SystemError) in try SystemThread.start { [self] in serve() } }
            if case .failure(let error) = started { return error }
            running = true
            return nil
        }
        if let error { throw error }
    }

    private func serve() -> Never {
        while true {
            pending.wait()
            guard let request = requests.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            let result = Result { () throws(SystemError) in
                try ChildProcess.spawn(request.executable, arguments: request.arguments, environment: request.environment,
                                       descriptors: request.descriptors)
            }
            request.answer.withLock { $0 = result }
            request.done.signal()
        }
    }

    /// `ChildProcess.spawn` on the starter thread; waits for it.
    func spawn(_ executable: String, arguments: [String], environment: [String],
               descriptors: [ChildDescriptor]) throws(SystemError) -> ChildProcess {
        try ensureRunning()
        let request = Request(executable, arguments, environment, descriptors)
        requests.withLock { $0.append(request) }
        pending.signal()
        request.done.wait()
        // The thread answers every request it takes before signalling.
        return try request.answer.withLock { $0! }.get()
    }
}
