import AirlockPolicy
import AirlockSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The append-only audit journal, `state/journal.jsonl`: one JSON object per line,
/// each appended with O_APPEND and made durable with fsync before the call
/// returns. Rotated by size into `journal.1.jsonl` … `journal.N.jsonl`.
///
/// Writers in several processes (the daemon's workers, `quarantine release` and
/// `purge`) serialise on an flock of `journal.lock`, so a rotation never races an
/// append. A crash can tear at most the line being written; readers skip it.
public struct Journal: Sendable {
    static let current: [UInt8] = Array("journal.jsonl".utf8)
    static let lockName: [UInt8] = Array("journal.lock".utf8)

    let state: FileDescriptor
    let maxBytes: Int64
    let keep: Int

    public init(state: FileDescriptor, maxBytes: Int64 = 16 << 20, keep: Int = 5) {
        self.state = state
        self.maxBytes = maxBytes
        self.keep = keep
    }

    static func rotated(_ index: Int) -> [UInt8] { Array("journal.\(index).jsonl".utf8) }

    /// Appends one record, `time` first.
    public func append(_ event: String, _ fill: (inout JSONObjectWriter) -> Void) throws(SystemError) {
        var record = JSONObjectWriter()
        record.add("time", timestamp())
        record.add("event", event)
        fill(&record)
        let line = Array((record.text + "\n").utf8)
        let lock = try state.open(Journal.lockName, O_RDWR | O_CREAT | O_NOFOLLOW, mode: 0o600)
        defer { lock.close() }
        _ = try retrying("flock") { flock(lock.rawValue, LOCK_EX) }
        var file = try state.open(Journal.current, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW, mode: 0o600)
        defer { file.close() }
        let size = try file.status().size
        if size > 0 && size + Int64(line.count) > maxBytes {
            file.close()
            try rotate()
            file = try state.open(Journal.current, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW, mode: 0o600)
        }
        // A crash mid-append leaves a torn last line: start on a fresh one so the
        // torn fragment does not swallow this record too.
        var last: UInt8 = 0x0A
        let end = try file.status().size
        if end > 0 {
            _ = try withUnsafeMutableBytes(of: &last) { raw in
                Result { () throws(SystemError) in try file.read(into: raw, at: end - 1) }
            }.get()
        }
        try file.writeAll(last == 0x0A ? line : [0x0A] + line)
        try file.sync()
    }

    /// journal.N-1 → journal.N, …, journal.jsonl → journal.1.jsonl; the oldest beyond `keep` goes.
    private func rotate() throws(SystemError) {
        try state.removeTree(Journal.rotated(keep))
        for index in stride(from: keep - 1, through: 1, by: -1) {
            do {
                try state.rename(Journal.rotated(index), to: state, Journal.rotated(index + 1))
            } catch where error.errno == .noEntry {
                continue
            }
        }
        try state.rename(Journal.current, to: state, Journal.rotated(1))
        try state.sync()
    }

    /// Every whole record, oldest first; a torn or unreadable line is skipped.
    public func records() throws(SystemError) -> [[String: Any]] {
        var result: [[String: Any]] = []
        for name in (1...keep).reversed().map(Journal.rotated) + [Journal.current] {
            let bytes: [UInt8]
            do {
                bytes = try state.open(name, O_RDONLY | O_NOFOLLOW).closeAfter { (fd) throws(SystemError) in
                    try fd.readAll(limit: Int(maxBytes) * 2 + (1 << 20))
                }
            } catch where error.errno == .noEntry {
                continue
            }
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                guard let object = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any],
                      object["event"] is String else { continue }
                result.append(object)
            }
        }
        return result
    }
}
