import AirlockSystem
import CInotifyTools
import Foundation
import Synchronization

/// inotify on the inbox, through libinotifytools, on a thread of its own.
///
/// libinotifytools keeps global state, is not thread-safe, and waits only in
/// whole seconds (in 3.22, `inotifytools_next_event(0)` blocks rather than
/// polls). So one thread owns it: it waits up to a second at a time for events,
/// keeps each for the daemon to take and wakes it, and between waits
/// (re)installs the watch when the daemon asks, for instance after the inbox
/// was replaced.
final class InboxWatch: Sendable {
    /// How a name turned up.
    enum Arrival: Equatable, Sendable {
        /// Closed after writing (IN_CLOSE_WRITE).
        case closed
        /// Moved in (IN_MOVED_TO): a rename is the producer saying the file is complete.
        case moved
        /// Created (IN_CREATE): by open(2), or by link(2), which is how OpenSSH's
        /// legacy SFTP rename moves a finished upload in (then unlinks the old name).
        case created
    }

    enum Event: Equatable, Sendable {
        case name([UInt8], Arrival)
        /// The kernel's queue overflowed: events were lost, rescan.
        case overflow
        /// The inbox was deleted, moved, unmounted or its watch dropped.
        case inboxGone
        /// The watch is in place (again): anything that arrived before is found by a rescan.
        case watching
        /// The watch could not be installed.
        case failed(String)
    }

    static let dropEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)
    static let goneEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED)

    /// What the daemon asks of the watch thread, and what the thread has for it.
    private struct Mailbox: Sendable {
        var rewatchWanted = true
        var stopWanted = false
        var events: [Event] = []
    }

    let path: String
    private let mailbox = Mutex(Mailbox())
    /// Called after each event is kept, so the daemon wakes to take it.
    private let arrived: @Sendable () -> Void

    init(path: String, arrived: @escaping @Sendable () -> Void) throws {
        self.path = path
        self.arrived = arrived
        guard inotifytools_initialize() != 0 else {
            throw SystemError("inotify_init", text: path, Errno(rawValue: inotifytools_error()))
        }
    }

    func start() {
        let thread = Thread { [self] in loop() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Asks the thread to watch the path again (it does so within a second).
    func rewatch() {
        mailbox.withLock { $0.rewatchWanted = true }
    }

    func stop() {
        mailbox.withLock { $0.stopWanted = true }
    }

    /// The events that arrived since the last call, oldest first.
    func takeEvents() -> [Event] {
        mailbox.withLock { mailbox in
            defer { mailbox.events.removeAll() }
            return mailbox.events
        }
    }

    private func deliver(_ event: Event) {
        mailbox.withLock { $0.events.append(event) }
        arrived()
    }

    private func loop() {
        // The watch descriptor: the thread's own, like the rest of libinotifytools' state.
        var watch: Int32 = -1
        while true {
            let (stop, again) = mailbox.withLock { mailbox in
                defer { mailbox.rewatchWanted = false }
                return (mailbox.stopWanted, mailbox.rewatchWanted)
            }
            if stop { return }
            if again { install(&watch) }
            guard let raw = inotifytools_next_event(1) else { continue }
            if let event = InboxWatch.translate(raw) {
                if event == .inboxGone, raw.pointee.mask & UInt32(IN_IGNORED) != 0 { watch = -1 }
                deliver(event)
            }
        }
    }

    private func install(_ watch: inout Int32) {
        if watch >= 0 {
            _ = inotifytools_remove_watch_by_wd(watch)
            watch = -1
        }
        let events = Int32(bitPattern: InboxWatch.dropEvents | InboxWatch.goneEvents | UInt32(IN_ONLYDIR))
        guard inotifytools_watch_file(path, events) != 0 else {
            deliver(.failed("cannot watch \(path): \(Errno(rawValue: inotifytools_error()))"))
            return
        }
        watch = Int32(inotifytools_wd_from_filename(path))
        deliver(.watching)
    }

    private static func translate(_ raw: UnsafeMutablePointer<inotify_event>) -> Event? {
        let mask = raw.pointee.mask
        if mask & UInt32(IN_Q_OVERFLOW) != 0 { return .overflow }
        if mask & goneEvents != 0 { return .inboxGone }
        guard mask & dropEvents != 0, raw.pointee.len > 0 else { return nil }
        // The name follows the fixed part of struct inotify_event, NUL-padded.
        let name = UnsafeRawBufferPointer(start: UnsafeRawPointer(raw).advanced(by: MemoryLayout<inotify_event>.size),
                                          count: Int(raw.pointee.len))
        let arrival: Arrival = mask & UInt32(IN_MOVED_TO) != 0 ? .moved : mask & UInt32(IN_CREATE) != 0 ? .created : .closed
        return .name(Array(name.prefix { $0 != 0 }), arrival)
    }
}
