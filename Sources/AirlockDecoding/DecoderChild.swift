#if canImport(Glibc)
import Glibc
#endif
import AirlockPolicy
import AirlockSystem

/// The decoder child's whole life: parse its arguments, confine itself, decode
/// the inherited drop into the inherited staging directory, and write one JSON
/// verdict to the inherited result pipe.
///
/// Arguments: `FORMAT [--inspect] --limit-...=N ... POLICY_KEY=VALUE ...`.
/// Descriptors: 3 the drop (read-only), 4 the staging directory (absent with
/// `--inspect`), 5 the result pipe.
public enum DecoderChild {
    /// Exit status for arguments the supervisor should never have produced.
    public static let usageStatus: Int32 = 64

    public static func main(_ arguments: [String]) -> Int32 {
        guard let request = Request(arguments) else {
            printError("airlock-decoder: bad arguments (this program is started by airlock, not by hand)")
            return usageStatus
        }
        do {
            try Confinement.apply(request.limits)
        } catch {
            printError("airlock-decoder: cannot confine: \(error)")
            return 70
        }
        _ = setlocale(LC_CTYPE, "C.UTF-8")
        #if DEBUG
        // Test-only fault injection: compiled into debug builds only, read from an
        // environment the supervisor forwards only in debug builds, and never from
        // the drop's bytes.
        if let fault = getenv("AIRLOCK_TEST_DECODER_FAULT").map({ String(cString: $0) }) {
            if fault == "abort" { abort() }
            if fault == "hang" { while true { sleep(60) } }
            if fault == "delay" { sleep(2) }
        }
        #endif
        let result = decode(request)
        do {
            try Confinement.resultDescriptor.writeAll(Array(result.utf8))
        } catch {
            printError("airlock-decoder: cannot report: \(error)")
            return 71
        }
        return 0
    }

    static func decode(_ request: Request) -> String {
        let drop = Confinement.dropDescriptor
        let size: Int64
        do {
            size = try drop.status().size
        } catch {
            return failure(error)
        }
        let scan = ArchiveScan(format: request.format, policy: request.policy, drop: drop, dropSize: size)
        let outcome: ScanOutcome
        if request.inspect {
            var sink = DiscardingSink()
            outcome = scan.run(into: &sink)
        } else {
            var sink = StagingWriter(root: Confinement.stagingDescriptor, policy: request.policy)
            outcome = scan.run(into: &sink)
        }
        if let error = outcome.systemError { return failure(error) }
        var json = JSONObjectWriter()
        if let violation = outcome.findings.worst {
            json.add("verdict", "rejected")
            json.add("reason", violation.reason.rawValue)
            json.add("detail", violation.detail)
            if let entry = violation.entry { json.add("entry", EscapedName(entry).text) }
            if let index = violation.index { json.add("index", Int64(index)) }
        } else {
            json.add("verdict", "accepted")
            json.add("files", outcome.files)
            json.add("directories", outcome.directories)
        }
        json.add("entries", Int64(outcome.entries))
        json.add("bytes_written", outcome.bytesWritten)
        return json.text
    }

    static func failure(_ error: SystemError) -> String {
        var json = JSONObjectWriter()
        json.add("verdict", "error")
        json.add("errno", Int64(error.errno.rawValue))
        json.add("detail", error.description)
        return json.text
    }

    static func printError(_ text: String) {
        let line = Array((text + "\n").utf8)
        line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }

    struct Request {
        var format: ArchiveFormat
        var inspect = false
        var limits = DecoderLimits(addressSpaceBytes: 0, cpuSeconds: 0, openFiles: 0, fileSizeBytes: 0)
        var policy: Policy

        init?(_ arguments: [String]) {
            guard let first = arguments.first, let format = ArchiveFormat(rawValue: first) else { return nil }
            self.format = format
            var policyArguments: [String] = []
            var seen = Set<String>()
            for argument in arguments.dropFirst() {
                if argument == "--inspect" { inspect = true; continue }
                if argument.hasPrefix("--limit-") {
                    let parts = argument.dropFirst(8).split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, let value = Int64(parts[1]), value > 0 else { return nil }
                    switch parts[0] {
                    case "as": limits.addressSpaceBytes = value
                    case "cpu": limits.cpuSeconds = value
                    case "nofile": limits.openFiles = value
                    case "fsize": limits.fileSizeBytes = value
                    default: return nil
                    }
                    seen.insert(parts[0])
                    continue
                }
                policyArguments.append(argument)
            }
            guard seen.count == 4, let policy = Policy(arguments: policyArguments) else { return nil }
            self.policy = policy
        }
    }
}
