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

    private let thread = SerialThread()

    /// What the thread answers one request with.
    private final class Answer: Sendable {
        let result = Mutex<Result<ChildProcess, SystemError>?>(nil)
        let done = DispatchSemaphore(value: 0)
    }

    private init() {}

    /// `ChildProcess.spawn` on the starter thread; waits for it.
    func spawn(_ executable: String, arguments: [String], environment: [String],
               descriptors: [ChildDescriptor]) throws(SystemError) -> ChildProcess {
        let answer = Answer()
        try thread.run {
            let result = Result { () throws(SystemError) in
                try ChildProcess.spawn(executable, arguments: arguments, environment: environment, descriptors: descriptors)
            }
            answer.result.withLock { $0 = result }
            answer.done.signal()
        }
        answer.done.wait()
        // The thread answers every job it takes before signalling.
        return try answer.result.withLock { $0! }.get()
    }
}
