import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What /proc says of other processes, for the tests that follow decoder
/// children, templates and their parents.
enum ProcessTable {
    /// Field `index` after the name in /proc/PID/stat (0: the state, 1: the
    /// parent's pid, 11 and 12: user and system clock ticks); nil once it is gone.
    static func statField(_ pid: Int32, _ index: Int) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > index ? String(fields[index]) : nil
    }

    /// The processes whose command line contains `marker`, with `parent` as their parent when one is given.
    static func processes(commandLineContaining marker: String, parent: Int32? = nil) -> Set<Int32> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return Set(entries.compactMap(Int32.init).filter { pid in
            if let parent, statField(pid, 1) != String(parent) { return false }
            guard let commandLine = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: commandLine, as: UTF8.self).contains(marker)
        })
    }
}
