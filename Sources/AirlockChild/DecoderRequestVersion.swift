import AirlockSystem

/// The version of the request a decoder child is given, as the first of its
/// arguments (`--request-version=N`), however it was started: on its command
/// line, by hand-over, or forked by a template.
///
/// The supervisor and the decoder programs on disk can come from different
/// builds (a package upgrade under a running daemon starts new templates from
/// new binaries). A child that is given another version, or none, refuses the
/// request before it takes the drop and exits with `refusedStatus`; the
/// supervisor then defers the drop, as for any child that never took its drop
/// (`TakenNotice`), and restarts its templates.
public enum DecoderRequestVersion {
    /// The version this build writes and the only one it accepts.
    public static let current: Int64 = 2
    public static let argumentPrefix = "--request-version="
    /// EX_PROTOCOL: the request was of another version.
    public static let refusedStatus: Int32 = 76

    /// The arguments that open every request this build makes.
    public static var arguments: [String] { [argumentPrefix + String(current)] }

    /// The version this child accepts: `current`, unless a debug build's test
    /// makes it claim another (`AIRLOCK_TEST_CLAIM_REQUEST_VERSION`, read by the
    /// child alone, so that a test can put a decoder of another version on disk
    /// under a running daemon).
    static var accepted: Int64 {
        #if DEBUG
        if let text = CurrentProcess.environment("AIRLOCK_TEST_CLAIM_REQUEST_VERSION"), let claimed = Int64(text) { return claimed }
        #endif
        return current
    }

    /// Removes the version argument from the front of `arguments`; false (and
    /// said on standard error) when it is missing or names another version.
    public static func take(_ arguments: inout [String], program: String) -> Bool {
        guard let first = arguments.first, first.hasPrefix(argumentPrefix),
              let version = Int64(first.dropFirst(argumentPrefix.count)) else {
            DecoderChild.printError("\(program): the request names no version; this decoder reads version \(accepted)")
            return false
        }
        guard version == accepted else {
            DecoderChild.printError("\(program): the request is version \(version); this decoder reads version \(accepted)")
            return false
        }
        arguments.removeFirst()
        return true
    }
}
