import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation

/// Progress of one large drop on standard error, rewritten in place: bytes of the
/// drop read of its size, rate, time left. Used only when standard output is a
/// terminal; otherwise nothing but the JSON lines is printed.
package final class ProgressDisplay {
    private let name: String
    private let started = monotonicNanoseconds()
    private var shown = false

    /// Below this size a drop finishes too fast for progress to mean anything.
    static let minimumBytes: Int64 = 8 << 20

    package init(name: [UInt8]) {
        self.name = EscapedName(name).shown
    }

    package func update(done: Int64, total: Int64) {
        guard total >= ProgressDisplay.minimumBytes, total > 0 else { return }
        let seconds = Double(monotonicNanoseconds() - started) / 1e9
        let rate = seconds > 0 ? Double(done) / seconds : 0
        let left = rate > 0 ? Double(max(total - done, 0)) / rate : 0
        let percent = Int(Double(done) / Double(total) * 100)
        let line = String(format: "\r\u{1B}[Kairlock: %@  %.1f of %.1f MiB (%d%%)  %.1f MiB/s  %d:%02d left",
                          name, Double(done) / 1048576, Double(total) / 1048576, percent, rate / 1048576, Int(left) / 60, Int(left) % 60)
        try? FileDescriptor(rawValue: 2).writeAll(Array(line.utf8))
        shown = true
    }

    package func finish() {
        if shown { try? FileDescriptor(rawValue: 2).writeAll(Array("\r\u{1B}[K".utf8)) }
    }
}
