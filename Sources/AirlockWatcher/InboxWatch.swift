import AirlockSystem
import CInotifyTools
import Foundation

/// inotify on the inbox, through libinotifytools, on a thread of its own.
///
/// libinotifytools keeps global state, is not thread-safe, and waits only in
/// whole seconds (in 3.22, `inotifytools_next_event(0)` blocks rather than
/// polls). So one thread owns it: it waits up to a second at a time for events,
/// hands each to the daemon, and between waits (re)installs the watch when the
/// daemon asks, for instance after the inbox was replaced.
final class InboxWatch: @unchecked Sendable {
    enum Event: Equatable, Sendable {
        /// A name was closed after writing (`renamed` false), or moved in (true):
        /// a rename is the producer saying the file is complete.
        case name([UInt8], renamed: Bool)
        /// The kernel's queue overflowed: events were lost, rescan.
        case overflow
        /// The inbox was deleted, moved, unmounted or its watch dropped.
        case inboxGone
        /// The watch is in place (again): anything that arrived before is found by a rescan.
        case watching
        /// The watch could not be installed.
        case failed(String)
    }

    static let dropEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)
    static let goneEvents = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED)

    let path: String
    private let deliver: @Sendable (Event) -> Void
    private let lock = NSLock()
    private var rewatchWanted = true
    private var stopWanted = false
    private var watch: Int32 = -1

    init(path: String, deliver: @escaping @Sendable (Event) -> Void) throws {
        self.path = path
        self.deliver = deliver
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
        lock.lock()
        rewatchWanted = true
        lock.unlock()
    }

    func stop() {
        lock.lock()
        stopWanted = true
        lock.unlock()
    }

    private func loop() {
        while true {
            lock.lock()
            let stop = stopWanted
            let again = rewatchWanted
            rewatchWanted = false
            lock.unlock()
            if stop { return }
            if again { install() }
            guard let raw = inotifytools_next_event(1) else { continue }
            if let event = InboxWatch.translate(raw) {
                if event == .inboxGone, raw.pointee.mask & UInt32(IN_IGNORED) != 0 { watch = -1 }
                deliver(event)
            }
        }
    }

    private func install() {
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
        return .name(Array(name.prefix { $0 != 0 }), renamed: mask & UInt32(IN_MOVED_TO) != 0)
    }
}
