import AirlockPolicy
import AirlockSystem

/// The `cluster` section: whether this root is shared by a fleet of instances
/// (on CephFS or NFSv4.1, or several daemons on one host) and which instance
/// this daemon is. With none of it set, and no `--instance`, airlock runs
/// alone on the root exactly as a single daemon always has.
public struct ClusterSettings: Sendable, Equatable {
    /// The root is on a filesystem other hosts share: the inbox is listed every
    /// poll interval (inotify does not see other hosts' writes) and only renamed
    /// drops are taken (a read lease does not reach other hosts).
    public var shared = false
    /// This instance's name; empty: the host name.
    public var instance = ""
    /// On a shared root, also take drops written in place once their size and
    /// modification time stood still for one poll interval (no lease can tell
    /// that another host's writer has closed them).
    public var settledWrites = false

    public init() {}

    /// Whether a name written in place (not renamed in) is taken on this root: on a
    /// shared root only with the opt-in.
    public var takesSettledWrites: Bool { shared && settledWrites }

    /// The longest instance name: it becomes file names, a journal's name and a label.
    public static let maxInstanceBytes = 64

    /// Why `name` cannot name an instance, or nil when it can: 1 to 64 bytes of
    /// ASCII letters, digits, `.`, `_` and `-`, beginning with a letter or digit,
    /// and not shaped like a claim id, which sits beside instance directories in a
    /// root upgraded from a single daemon.
    public static func problem(with name: String) -> String? {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maxInstanceBytes else { return "must be 1 to \(maxInstanceBytes) bytes" }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        guard isAlphanumeric(bytes[0]) else { return "must begin with a letter or a digit" }
        guard bytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }) else {
            return "may hold only ASCII letters, digits, '.', '_' and '-'"
        }
        guard !ClusterSettings.looksLikeClaimID(bytes) else { return "may not look like a claim id (YYYYMMDDTHHMMSSZ-…)" }
        return nil
    }

    /// Whether `name` begins as a claim id does (`YYYYMMDDTHHMMSSZ-`): a single
    /// daemon's claims sit beside instances' directories in `state/claimed/`.
    public static func looksLikeClaimID(_ name: [UInt8]) -> Bool {
        guard name.count >= 17 else { return false }
        let digits: ClosedRange<UInt8> = 0x30...0x39
        return name[0..<8].allSatisfy { digits.contains($0) } && name[8] == UInt8(ascii: "T")
            && name[9..<15].allSatisfy { digits.contains($0) } && name[15] == UInt8(ascii: "Z") && name[16] == UInt8(ascii: "-")
    }

    mutating func read(_ reader: inout ObjectReader) throws(ConfigurationError) {
        shared = try reader.bool("shared") ?? shared
        settledWrites = try reader.bool("settled_writes") ?? settledWrites
        if let name = try reader.string("instance") {
            if !name.isEmpty, let problem = ClusterSettings.problem(with: name) {
                throw ConfigurationError("cluster.instance: \(JSONObjectWriter.quote(name)) \(problem)")
            }
            instance = name
        }
    }

    var rendered: [String] {
        ["\"shared\": \(shared)", "\"instance\": \(JSONObjectWriter.quote(instance))", "\"settled_writes\": \(settledWrites)"]
    }

    /// The instance a daemon runs as: `--instance`, else `cluster.instance`, else the
    /// host name when the root is shared; nil for a single daemon (no fleet).
    public func instanceName(given: String?) throws(ConfigurationError) -> String? {
        if let given {
            if let problem = ClusterSettings.problem(with: given) { throw ConfigurationError("--instance: \(JSONObjectWriter.quote(given)) \(problem)") }
            return given
        }
        if !instance.isEmpty { return instance }
        guard shared else { return nil }
        let host = CurrentProcess.hostName() ?? ""
        if let problem = ClusterSettings.problem(with: host) {
            throw ConfigurationError("cluster.shared: the host name \(JSONObjectWriter.quote(host)) \(problem); set cluster.instance or give --instance")
        }
        return host
    }
}
