import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

let promtoolPath = "/usr/bin/promtool"
var promtoolInstalled: Bool { FileManager.default.isExecutableFile(atPath: promtoolPath) }

/// Runs `promtool` (Debian's prometheus package) with `arguments`, `input` on
/// standard input; its status and everything it printed.
func promtool(_ arguments: [String], input: Data? = nil, in directory: URL? = nil) throws -> (status: Int32, output: String) {
    let path = promtoolPath
    try #require(promtoolInstalled, "promtool is missing: apt-get install prometheus")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let stdin = Pipe()
    process.standardInput = stdin
    try process.run()
    try stdin.fileHandleForWriting.write(contentsOf: input ?? Data())
    try stdin.fileHandleForWriting.close()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

@Suite("Metrics: Prometheus conventions, alert rules and a dashboard that only names metrics the daemon writes")
struct MetricsTests {
    static let prometheus = Binary.repository.appendingPathComponent("deploy/prometheus")

    func liveMetrics() throws -> String { try metricsAfterOneAcceptedAndOneRejected() }

    /// The metric names of the samples in exposition `text`.
    func sampleNames(_ text: String) -> Set<String> {
        Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            line.split(whereSeparator: { $0 == "{" || $0 == " " }).first.map(String.init)
        })
    }

    /// The `airlock_…` names an expression uses.
    func namesIn(_ expression: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "airlock_[a-zA-Z0-9_]+")
        let range = NSRange(expression.startIndex..., in: expression)
        return pattern.matches(in: expression, range: range).map { String(expression[Range($0.range, in: expression)!]) }
    }

    /// Every string under the key `expr`, anywhere in a JSON document.
    func expressions(_ value: Any) -> [String] {
        switch value {
        case let object as [String: Any]:
            return object.flatMap { key, item in key == "expr" ? [item as? String].compactMap { $0 } : expressions(item) }
        case let list as [Any]:
            return list.flatMap(expressions)
        default:
            return []
        }
    }

    @Test("promtool check metrics passes on the file the daemon writes, gauges included, no empty labels", .needsLeases,
          .enabled(if: promtoolInstalled, "needs promtool (package prometheus)"))
    func promtoolCheck() throws {
        let text = try liveMetrics()
        let checked = try promtool(["check", "metrics"], input: Data(text.utf8))
        expect(checked.status == 0 && checked.output.isEmpty, "\(checked.output)")
        let names = sampleNames(text)
        for name in ["airlock_drops_total", "airlock_rejections_total", "airlock_received_bytes_total", "airlock_outbox_written_bytes_total",
                     "airlock_quarantine_entries", "airlock_quarantine_bytes", "airlock_claimed_drops", "airlock_oldest_claim_age_seconds",
                     "airlock_oldest_inbox_file_age_seconds", "airlock_confinement_in_force", "airlock_journal_write_errors_total",
                     "airlock_filesystem_free_bytes", "airlock_build_info", "airlock_metrics_written_timestamp_seconds",
                     "airlock_publish_lag_records", "airlock_publish_failures_total", "airlock_publish_published_total"] {
            expect(names.contains(name), "the daemon does not write \(name)")
        }
        expect(!text.contains(#"="""#), "an empty label")
        expect(text.contains("airlock_quarantine_entries 1\n"))
        // Both verdicts wait for a publisher that has never run.
        expect(text.contains("airlock_publish_lag_records 2\n"))
        expect(text.contains(#"airlock_confinement_in_force{mechanism="supervisor_landlock"}"#))
    }

    @Test("the alert rules pass promtool check rules and their unit tests",
          .enabled(if: promtoolInstalled, "needs promtool (package prometheus)"))
    func rules() throws {
        let checked = try promtool(["check", "rules", "airlock.rules.yml"], in: Self.prometheus)
        expectEqual(checked.status, 0, "\(checked.output)")
        let tested = try promtool(["test", "rules", "airlock.rules.test.yml"], in: Self.prometheus)
        expectEqual(tested.status, 0, "\(tested.output)")
    }

    @Test("every query of the dashboard and every alert names only metrics a live daemon writes", .needsLeases)
    func dashboardAgainstLiveMetrics() throws {
        let names = sampleNames(try liveMetrics())
        let dashboard = try JSONSerialization.jsonObject(with: Data(contentsOf: Binary.repository.appendingPathComponent("deploy/grafana/airlock.json")))
        let queries = expressions(dashboard)
        expect(queries.count >= 14, "the dashboard's queries were not found")
        let rules = try String(contentsOf: Self.prometheus.appendingPathComponent("airlock.rules.yml"), encoding: .utf8)
        let alerts = rules.split(separator: "\n").filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("expr:") }.map(String.init)
        expect(alerts.count >= 8)
        for expression in queries + alerts {
            let used = namesIn(expression)
            expect(!used.isEmpty, "\(expression) names no airlock metric")
            for name in used { expect(names.contains(name), "\(expression): the daemon writes no \(name)") }
        }
    }
}

/// The metrics file of a daemon that has accepted one drop and rejected one, with
/// publishing configured (the daemon itself never talks to NATS, so no server is needed
/// for it to write the publisher's lag).
func metricsAfterOneAcceptedAndOneRejected() throws -> String {
    let sandbox = try Sandbox()
    try sandbox.initialise()
    try sandbox.configure("metrics", ["path": "state/airlock.prom", "interval_seconds": 1])
    try sandbox.configure("publish", ["nats": ["servers": ["nats://127.0.0.1:9"], "stream": "AIRLOCK"]])
    let daemon = try RunningDaemon(sandbox)
    try sandbox.drop(Samples.validZip, as: "m1.zip")
    try sandbox.drop(Samples.traversalZip, as: "m2.zip")
    daemon.waitForVerdicts(2)
    daemon.signal(SIGTERM)
    expectEqual(daemon.waitForExit(seconds: 15), 0)
    return try String(contentsOf: sandbox.root.appendingPathComponent("state/airlock.prom"), encoding: .utf8)
}
