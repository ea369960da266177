@testable import AirlockConfiguration
@testable import AirlockDecoders
import AirlockChild
import Foundation

/// The debug build's decoder programs and the processes they become, for the
/// tests that start decoder children without an intake around them.
enum DecoderPrograms {
    /// The debug build's airlock-decoder, beside the test bundle.
    static let decoder: String = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("airlock-decoder").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/airlock-decoder").path
    }()

    /// Whether `pid` is a process at all (a zombie counts: it was not reaped).
    static func exists(_ pid: Int32) -> Bool {
        FileManager.default.fileExists(atPath: "/proc/\(pid)")
    }

    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        return Int32(stat[stat.index(after: close)...].split(separator: " ")[1])
    }

    static let limits = DecoderLimits(addressSpaceBytes: 1 << 31, cpuSeconds: 1, openFiles: 64, fileSizeBytes: 1 << 20)
    /// A probe's request with these limits, as the children read it.
    static let probe: [String] = {
        var configuration = Configuration()
        configuration.decoderConfinementRequired = true
        var request = configuration.decoderRequest(mode: .probe, format: "none")
        request.limits = limits
        return request.encoded
    }()
}
