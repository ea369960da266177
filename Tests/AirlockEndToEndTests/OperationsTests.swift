import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A root with several rejections of several reasons and ages, and one acceptance.
func populatedRoot(policy: [String: Any] = [:]) throws -> (Sandbox, [String]) {
    let sandbox = try Sandbox()
    try sandbox.initialise(policy: policy)
    for name in ["zip-traversal.zip", "zip-bomb.zip", "tar-symlink.tar", "zip-deflate-valid.zip", "unknown-garbage.zip"] {
        try sandbox.drop(try Data(contentsOf: Samples.fixture(name)), as: name)
    }
    let result = try sandbox.runOnce()
    expectEqual(result.status, 0)
    let ids = result.events.filter { $0.kind == .rejected }.compactMap { $0.id }
    // Age one entry by ten days, as if it had been rejected then.
    let old = sandbox.quarantine.appendingPathComponent(ids[0]).appendingPathComponent("report.json")
    var report = try JSONSerialization.jsonObject(with: Data(contentsOf: old)) as! [String: Any]
    let tenDaysAgo = Date().addingTimeInterval(-10 * 86400).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    report["decided_at"] = tenDaysAgo
    try JSONSerialization.data(withJSONObject: report).write(to: old)
    return (sandbox, ids)
}

@Suite("Operations: quarantine review, journal, status, metrics")
struct OperationsTests {
    func root(_ sandbox: Sandbox) -> [String] { ["--root", sandbox.root.path] }

    @Test("quarantine list: aligned columns, JSON Lines newest first, filters by reason and age")
    func list() throws {
        let (sandbox, ids) = try populatedRoot()
        let table = try airlock(["quarantine", "list"] + root(sandbox))
        expectEqual(table.status, 0)
        let lines = table.stdout.split(separator: "\n")
        expectEqual(lines.count, 5)
        expect(lines[0].hasPrefix("ID"))
        for id in ids { expect(table.stdout.contains(id)) }
        let reasonColumn = lines[0].range(of: "REASON")!.lowerBound.utf16Offset(in: lines[0])
        for line in lines.dropFirst() { expect(line.count > reasonColumn, "columns line up: \(line)") }

        let json = try airlock(["quarantine", "list", "--json"] + root(sandbox)).documents(QuarantineListing.self)
        expectEqual(json.count, 4)
        let times = json.map(\.decidedAt)
        expectEqual(times, times.sorted(by: >), "newest first")
        expectEqual(json.last?.id, ids[0], "the aged entry is the oldest")

        let unsafe = try airlock(["quarantine", "list", "--json", "--reason", "unsafe-path"] + root(sandbox)).documents(QuarantineListing.self)
        expect(unsafe.allSatisfy { $0.reason == "unsafe-path" } && unsafe.count == 1)
        let recent = try airlock(["quarantine", "list", "--json", "--since", "1d"] + root(sandbox)).documents(QuarantineListing.self)
        expectEqual(recent.count, 3)
        expect(!recent.contains { $0.id == ids[0] })
    }

    @Test("quarantine show: the report in readable form and as JSON")
    func show() throws {
        let (sandbox, ids) = try populatedRoot()
        let traversal = ids.first { id in
            (try? Data(contentsOf: sandbox.quarantine.appendingPathComponent(id).appendingPathComponent("report.json")))
                .map { String(decoding: $0, as: UTF8.self).contains("unsafe-path") } ?? false
        }!
        let text = try airlock(["quarantine", "show", traversal] + root(sandbox))
        expectEqual(text.status, 0)
        for part in ["reason:         unsafe-path", "entry:          ../outside.txt", "policy:", "max_entries=1000", "sha256:"] {
            expect(text.stdout.contains(part), "\(text.stdout)")
        }
        let json = try airlock(["quarantine", "show", traversal, "--json"] + root(sandbox))
        let shown = json.document(Report.self)
        expectEqual(shown?.id, traversal)
        expectEqual(shown?.holdsDrop, true)
    }

    static let errorCases: [([String], Int32)] = [
        (["quarantine", "show", "not-an-id"], Int32(65)),
        (["quarantine", "show", "20200101T000000Z-00000000"], 65),
        (["quarantine", "release", "../../etc"], 65),
        (["quarantine", "purge", "20200101T000000Z-00000000"], 65),
        (["history", "--id", "nope"], 65),
        (["quarantine", "list", "--since", "3x"], 64),
        (["quarantine", "list", "--since", "-5m"], 64),
        (["quarantine", "purge", "--older-than", "soon"], 64),
        (["quarantine", "list", "--frobnicate"], 64),
        (["quarantine", "list", "--reason", "no-such-reason"], 64),
        (["quarantine", "wipe"], 64),
        (["quarantine"], 64),
        (["status", "--verbose"], 64),
        ]

    @Test("bad ids, unknown flags and malformed durations are clear errors with the right status", arguments: errorCases)
    func errors(_ arguments: [String], _ status: Int32) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let result = try airlock(arguments + ["--root", sandbox.root.path])
        expectEqual(result.status, status, "\(arguments): \(result.stderr)")
        expect(result.stderr.contains("airlock: error:"))
        expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"))
    }

    @Test("a release after loosening a quota ends accepted; releasing twice is refused; both are journalled")
    func releaseAfterLoosening() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: ["max_file_bytes": 1000])
        try sandbox.drop(Samples.validZip, as: "strict.zip")
        let first = try sandbox.runOnce()
        expectEqual(first.events.first?.reason, "file-too-large")
        let id = try #require(first.events.first?.id)

        try sandbox.configure("policy", ["max_file_bytes": 20 << 20])

        let release = try airlock(["quarantine", "release", id] + root(sandbox))
        expectEqual(release.status, 0, "\(release.stderr)")
        try expectEqual(Data(contentsOf: sandbox.inbox.appendingPathComponent("strict.zip")), Samples.validZip)
        let again = try airlock(["quarantine", "release", id] + root(sandbox))
        expectEqual(again.status, 65)
        expect(again.stderr.contains("already released"))

        let second = try sandbox.runOnce()
        expectEqual(second.events.first?.kind, .accepted, "\(second.stdout)")
        try sandbox.expectInvariants()
        let report = try Report.read(sandbox.quarantine.appendingPathComponent(id).appendingPathComponent("report.json"))
        expectEqual(report.history?.first?.action, "released")
        let history = try airlock(["history", "--json", "--id", id] + root(sandbox)).events.map(\.kind.rawValue)
        expectEqual(history, ["claimed", "rejected", "released"])
    }

    @Test("purge by id and by age, with --dry-run touching nothing, journalled")
    func purge() throws {
        let (sandbox, ids) = try populatedRoot()
        let dry = try airlock(["quarantine", "purge", "--older-than", "5d", "--dry-run"] + root(sandbox))
        expectEqual(dry.status, 0)
        expect(dry.stderr.contains(ids[0]))
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).count, 4)
        let aged = try airlock(["quarantine", "purge", "--older-than", "5d"] + root(sandbox))
        expectEqual(aged.status, 0)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).sorted(), ids.dropFirst().sorted())
        try expectEqual(airlock(["quarantine", "purge", ids[1]] + root(sandbox)).status, 0)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).sorted(), ids.dropFirst(2).sorted())
        let purged = try airlock(["history", "--json"] + root(sandbox)).events.filter { $0.kind == .purged }
        expectEqual(Set(purged.compactMap { $0.id }), [ids[0], ids[1]])
        try expectEqual(airlock(["quarantine", "show", ids[1]] + root(sandbox)).status, 65)
        try sandbox.expectInvariants()
    }

    @Test("purge and release while the daemon runs lose nothing", .needsLeases)
    func whileRunning() throws {
        let (sandbox, ids) = try populatedRoot()
        let daemon = try RunningDaemon(sandbox)
        var names: [String] = []
        for index in 0..<60 {
            let name = "busy-\(index).zip"
            try sandbox.drop(index % 4 == 0 ? Samples.traversalZip : Samples.validZip, as: name)
            names.append(name)
            if index == 20 { try expectEqual(airlock(["quarantine", "purge", ids[1]] + root(sandbox)).status, 0) }
            if index == 30 { try expectEqual(airlock(["quarantine", "release", ids[2]] + root(sandbox)).status, 0) }
        }
        let verdicts = daemon.waitForVerdicts(61, seconds: 120)
        let dropped = verdicts.compactMap { $0.drop }
        expect(Set(dropped).isSuperset(of: names), "every busy drop was processed")
        expectEqual(dropped.count, 61, "the 60 drops and the released one, each once")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path)
        expect(!quarantined.contains(ids[1]))
        expect(quarantined.contains(ids[0]) && quarantined.contains(ids[2]) && quarantined.contains(ids[3]))
        expectEqual(quarantined.count, 3 + 15 + 1, "three left, fifteen new rejections, the released drop rejected again")
    }

    @Test("the journal survives a torn last line: at most that line is lost, readers skip it, appends go on")
    func tornJournal() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "one.zip")
        _ = try sandbox.runOnce()
        let journal = sandbox.root.appendingPathComponent("state/journal.jsonl")
        // What a SIGKILL in the middle of a write leaves behind.
        let handle = try FileHandle(forWritingTo: journal)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"time":"2026-11-29T00:00:00Z","event":"accep"#.utf8))
        try handle.close()
        try sandbox.drop(Samples.validZip, as: "two.zip")
        _ = try sandbox.runOnce()
        let records = try airlock(["history", "--json"] + root(sandbox))
        expectEqual(records.status, 0)
        expectEqual(records.events.map(\.kind.rawValue), ["claimed", "accepted", "claimed", "accepted"])
        let lines = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n")
        expectEqual(lines.count, 5)
        expectEqual(lines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }.count, 1)
    }

    @Test("the journal after a SIGKILL of a busy daemon: every line but the last parses", .needsLeases)
    func killedJournal() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox)
        for index in 0..<80 { try sandbox.drop(Samples.validZip, as: "k\(index).zip") }
        expect(waitFor(seconds: 30) { daemon.events.count >= 20 }, "the daemon was not busy: \(daemon.stderr)")
        daemon.signal(SIGKILL)
        expect(daemon.waitForExit(seconds: 10) != nil, "the daemon outlived SIGKILL")
        let text = try String(contentsOf: sandbox.root.appendingPathComponent("state/journal.jsonl"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast(text.hasSuffix("\n") ? 1 : 0)
        let unreadable = lines.enumerated().filter { (try? JSONSerialization.jsonObject(with: Data($0.element.utf8))) == nil }
        expect(unreadable.allSatisfy { $0.offset == lines.count - 1 }, "only a last line may be torn")
        let restarted = try RunningDaemon(sandbox, label: "restarted")
        // Not a count of the first daemon's verdict lines: a drop committed just before
        // the kill, whose line was never printed, is finished by recovery without one.
        let outbox = sandbox.outbox.path
        expect(waitFor(seconds: 90) { (try? FileManager.default.contentsOfDirectory(atPath: outbox).count) == 80 },
                "the restarted daemon did not finish every drop: \(restarted.stderr)")
        restarted.signal(SIGTERM)
        expectEqual(restarted.waitForExit(seconds: 15), 0)
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, 80)
        // Every drop has its accepted record, but for one whose record was the line torn by the kill.
        let accepted = try airlock(["history", "--json"] + root(sandbox)).events.filter { $0.kind == .accepted }.count
        expect(accepted + unreadable.count >= 80, "\(accepted) accepted records, \(unreadable.count) torn")
    }

    @Test("status: running or not, counts, queue, free space, confinement", .needsLeases)
    func status() throws {
        let (sandbox, _) = try populatedRoot()
        let idle = try airlock(["status"] + root(sandbox))
        expectEqual(idle.status, 0)
        expect(idle.stdout.contains("daemon:        not running"))
        expect(idle.stdout.contains("1 accepted, 4 rejected"))
        let daemon = try RunningDaemon(sandbox)
        try sandbox.drop(Samples.validZip, as: "later.zip")
        daemon.waitForVerdicts(1)
        let running = try airlock(["status", "--json"] + root(sandbox))
        let object = try #require(running.document(StatusDocument.self))
        expect(object.daemon.running)
        expectEqual(object.daemon.pid, Int(daemon.process.processIdentifier))
        expectEqual(object.sinceStart?.accepted, 1)
        expectEqual(object.totals.accepted, 2)
        expect(object.freeBytes > 0)
        expect(object.confinement != nil)
        let second = try airlock(["run", "--once"] + root(sandbox))
        expectEqual(second.status, 75, "run --once refuses while a daemon holds the root")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
    }

    @Test("the metrics file parses as Prometheus text", .needsLeases)
    func metrics() throws {
        let text = try metricsAfterOneAcceptedAndOneRejected()
        try PrometheusText.validate(text)
        expect(text.contains(#"airlock_drops_total{outcome="accepted"} 1"#))
        expect(text.contains(#"airlock_drops_total{outcome="rejected"} 1"#))
        expect(text.contains(#"airlock_rejections_total{reason="unsafe-path"} 1"#))
        expect(!text.contains(#"="""#), "no empty label")
        expect(text.contains("airlock_processing_seconds_count 2"))
    }
}

/// The text exposition format's rules, as far as a file for the textfile collector needs them.
enum PrometheusText {
    struct Invalid: Error, CustomStringConvertible { let description: String }

    static func validate(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw Invalid(description: "no final newline") }
        let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
        let label = #"[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*""#
        let sample = try Regex("^(\(name))(\\{(\(label))(,\(label))*\\})? (-?[0-9.e+]+|[+-]Inf|NaN)$")
        var types: [String: String] = [:]
        var seenSamples = Set<String>()
        var buckets: [String: [(Double, Double)]] = [:]
        var counts: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# HELP ") { continue }
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(String(parts[3])) else {
                    throw Invalid(description: "bad TYPE line: \(line)")
                }
                guard types[String(parts[2])] == nil, !seenSamples.contains(String(parts[2])) else {
                    throw Invalid(description: "TYPE after samples or twice: \(line)")
                }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            guard let match = line.wholeMatch(of: sample) else { throw Invalid(description: "not a sample: \(line)") }
            let metric = String(match.output[1].substring!)
            let value = Double(String(match.output[match.output.count - 1].substring!).replacingOccurrences(of: "+Inf", with: "inf")) ?? .nan
            var family = metric
            for suffix in ["_bucket", "_sum", "_count"] where metric.hasSuffix(suffix) && types[String(metric.dropLast(suffix.count))] == "histogram" {
                family = String(metric.dropLast(suffix.count))
            }
            guard let type = types[family] else { throw Invalid(description: "sample before its TYPE: \(line)") }
            seenSamples.insert(family)
            if type == "counter" && !family.hasSuffix("_total") { throw Invalid(description: "counter not named _total: \(family)") }
            if type == "histogram" && metric.hasSuffix("_bucket") {
                guard let le = line.firstMatch(of: #/le="([^"]+)"/#) else { throw Invalid(description: "bucket without le: \(line)") }
                let bound = le.1 == "+Inf" ? Double.infinity : Double(le.1) ?? .nan
                buckets[family, default: []].append((bound, value))
            }
            if type == "histogram" && metric.hasSuffix("_count") { counts[family] = value }
        }
        for (family, list) in buckets {
            guard list.map(\.0) == list.map(\.0).sorted(), list.last?.0 == .infinity else {
                throw Invalid(description: "\(family): buckets out of order or without +Inf")
            }
            guard list.map(\.1) == list.map(\.1).sorted() else { throw Invalid(description: "\(family): buckets not cumulative") }
            guard list.last?.1 == counts[family] else { throw Invalid(description: "\(family): +Inf bucket differs from _count") }
        }
    }
}

@Suite("Progress on a terminal")
struct ProgressTests {
    @Test("inspect on a terminal shows progress of a large drop; without a terminal only the JSON line")
    func progress() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: ["max_file_bytes": 64 << 20, "max_total_bytes": 256 << 20, "max_drop_bytes": 256 << 20])
        let tar = sandbox.logs.appendingPathComponent("large.tar")
        try TarBuilder.archive((0..<2).map { (name: "part-\($0).bin", size: 12 << 20) }).write(to: tar)
        try expectEqual(airlockShell("/bin/gzip", ["-1", tar.path]), 0)
        let large = tar.path + ".gz"
        let plain = try airlock(["inspect", large, "--root", sandbox.root.path], environment: ["AIRLOCK_TEST_PROGRESS_INTERVAL_MS": "1"])
        expectEqual(plain.status, 0, "\(plain.stderr)")
        expectEqual(plain.stdout.split(separator: "\n").count, 1)
        expect(!plain.stderr.contains("MiB/s"))

        // script(1) gives the command a terminal for standard output.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "\(Binary.airlock) inspect \(large) --root \(sandbox.root.path)", "/dev/null"]
        var environment = ProcessInfo.processInfo.environment
        environment["AIRLOCK_TEST_PROGRESS_INTERVAL_MS"] = "1"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        expect(output.contains("MiB/s"), "\(output)")
        expect(output.contains("of 24.0 MiB"), "\(output)")
        expect(output.contains(#""verdict":"accepted""#))
    }
}
