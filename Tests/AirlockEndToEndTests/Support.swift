import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The manifest in every accepted outbox entry.
let manifestName = ".airlock:manifest.json"

/// The built `airlock` binary: $AIRLOCK_BIN, or the one beside this test bundle.
enum Binary {
    static let airlock: String = {
        if let path = ProcessInfo.processInfo.environment["AIRLOCK_BIN"] { return path }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        // swift test runs .build/<triple>/debug/airlockPackageTests.xctest
        for _ in 0..<3 {
            let candidate = directory.appendingPathComponent("airlock").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let fallback = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/airlock").path
        return fallback
    }()

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}

struct Outcome {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The events printed on standard output, one per line, decoded strictly
    /// (a line that is not one is an issue of the test that asks).
    var events: [Event] { Event.lines(stdout) }

    /// The JSON objects on standard output as JSONSerialization gives them: only
    /// for checking every field against docs/schema.json (FieldSchema), which
    /// must see the names and types as printed, whatever they are.
    var jsonObjects: [[String: Any]] {
        stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The one JSON document of a command that prints one (`status --json`,
    /// `doctor --json`, …), decoded as `T`; nil, and an issue, for anything else.
    func document<T: Decodable>(_ type: T.Type, sourceLocation: SourceLocation = #_sourceLocation) -> T? {
        let lines = stdout.split(separator: "\n")
        expectEqual(lines.count, 1, "one JSON line expected: \(stdout) \(stderr)", sourceLocation: sourceLocation)
        do {
            return try JSONDecoder().decode(T.self, from: Data((lines.first ?? "").utf8))
        } catch {
            Issue.record("not a \(T.self): \(stdout): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Each JSON line of standard output decoded as `T` (`quarantine list --json`, …).
    func documents<T: Decodable>(_ type: T.Type, sourceLocation: SourceLocation = #_sourceLocation) -> [T] {
        stdout.split(separator: "\n").compactMap { line in
            do {
                return try JSONDecoder().decode(T.self, from: Data(line.utf8))
            } catch {
                Issue.record("not a \(T.self): \(line): \(error)", sourceLocation: sourceLocation)
                return nil
            }
        }
    }
}

/// Runs the real binary with `arguments`, no standard input; under `wrapper` (a
/// program and its arguments, given the binary and `arguments` after them) if any.
func airlock(_ arguments: [String], environment: [String: String] = [:], under wrapper: [String] = []) throws -> Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: wrapper.first ?? Binary.airlock)
    process.arguments = wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [Binary.airlock] + arguments
    var env = ProcessInfo.processInfo.environment
    env.removeValue(forKey: "AIRLOCK_TEST_DECODER_FAULT")
    for (key, value) in environment { env[key] = value }
    process.environment = env
    // Output goes to files, so neither stream can fill a pipe and stall the child.
    let capture = FileManager.default.temporaryDirectory.appendingPathComponent("airlock-capture-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: capture, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(at: capture) }
    let outURL = capture.appendingPathComponent("out"), errURL = capture.appendingPathComponent("err")
    FileManager.default.createFile(atPath: outURL.path, contents: nil)
    FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    defer { try? out.close(); try? err.close() }
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let stdoutData = try Data(contentsOf: outURL), stderrData = try Data(contentsOf: errURL)
    return Outcome(status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
                   stderr: String(decoding: stderrData, as: UTF8.self))
}

/// A randomly named directory under the system temporary directory (never that
/// directory itself), holding a root and a sentinel beside it; removed at the end.
final class Sandbox {
    let base: URL
    let root: URL
    private var sentinels: [URL: Data] = [:]
    private var outsideBefore: [String] = []

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/airlock-test.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        base = URL(fileURLWithPath: String(cString: made))
        root = base.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: false)
    }

    /// Where tests keep a daemon's output: beside the root, and not part of what
    /// "nothing outside the root" compares.
    var logs: URL { base.appendingPathComponent("logs") }

    deinit {
        try? FileManager.default.removeItem(at: base)
    }

    var inbox: URL { root.appendingPathComponent("inbox") }
    var outbox: URL { root.appendingPathComponent("outbox") }
    var quarantine: URL { root.appendingPathComponent("quarantine") }
    var staging: URL { root.appendingPathComponent("state/staging") }
    var claimed: URL { root.appendingPathComponent("state/claimed") }

    /// `airlock init`, optional policy overrides, and sentinels next to the inbox,
    /// the outbox and outside the root.
    func initialise(policy: [String: Any] = [:], decoder: [String: Any] = [:]) throws {
        let result = try airlock(["init", "--root", root.path])
        expectEqual(result.status, 0, "init failed: \(result.stderr)")
        if !policy.isEmpty { try configure("policy", policy) }
        if !decoder.isEmpty { try configure("decoder", decoder) }
        for url in [root.appendingPathComponent("sentinel.txt"), base.appendingPathComponent("sentinel-outside.txt")] {
            let data = Data("sentinel \(url.lastPathComponent) \(UUID())\n".utf8)
            try data.write(to: url)
            sentinels[url] = data
        }
        outsideBefore = try outsideRoot()
    }

    /// Merges `values` into one section of the root's airlock.json.
    func configure(_ section: String, _ values: [String: Any]) throws {
        let file = root.appendingPathComponent("airlock.json")
        var config = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
        var merged = config[section] as? [String: Any] ?? [:]
        for (key, value) in values { merged[key] = value }
        config[section] = merged
        try JSONSerialization.data(withJSONObject: config).write(to: file)
    }

    func drop(_ data: Data, as name: String) throws {
        try data.write(to: inbox.appendingPathComponent(name))
    }

    func runOnce(environment: [String: String] = [:]) throws -> Outcome {
        try airlock(["run", "--once", "--root", root.path], environment: environment)
    }

    /// Every path beneath `url`, relative, directories with a trailing slash.
    /// The manifest airlock adds to every outbox entry is left out: its own tests
    /// check it, and the others compare what the archive held.
    func listing(_ url: URL) throws -> [String] {
        var result: [String] = []
        func walk(_ directory: URL, _ prefix: String) throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where name != manifestName {
                let child = directory.appendingPathComponent(name)
                var st = stat()
                guard lstat(child.path, &st) == 0 else { continue }
                if st.st_mode & S_IFMT == S_IFDIR {
                    result.append(prefix + name + "/")
                    try walk(child, prefix + name + "/")
                } else {
                    result.append(prefix + name)
                }
            }
        }
        try walk(url, "")
        return result
    }

    /// After a run that judged nothing (every drop deferred): no output, no
    /// quarantine, staging empty, and `claimed` drops waiting in their claims.
    func expectOnlyClaimed(_ claimed: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: outbox.path), [], sourceLocation: sourceLocation)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: quarantine.path), [], sourceLocation: sourceLocation)
        try expectEqual(listing(staging), [], sourceLocation: sourceLocation)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: self.claimed.path).count, claimed, sourceLocation: sourceLocation)
    }

    /// The invariants (README) that hold after every run, whatever the input:
    /// sentinels unchanged, nothing new outside the root, staging, claims and
    /// the inbox empty.
    func expectInvariants(sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (url, data) in sentinels {
            expectEqual((try? Data(contentsOf: url)), data, "sentinel \(url.lastPathComponent) changed", sourceLocation: sourceLocation)
        }
        let outside = try outsideRoot()
        expectEqual(outside, outsideBefore, "something was created outside the root", sourceLocation: sourceLocation)
        try expectEqual(listing(staging), [], "staging is not empty", sourceLocation: sourceLocation)
        try expectEqual(listing(claimed), [], "a claim was left behind", sourceLocation: sourceLocation)
        try expectEqual(listing(inbox).filter { !isTemporary($0) }, [], "the inbox still holds drops", sourceLocation: sourceLocation)
        expect(!FileManager.default.fileExists(atPath: "/tmp/outside.txt"), "a traversal escaped to /tmp", sourceLocation: sourceLocation)
        expect(!FileManager.default.fileExists(atPath: root.deletingLastPathComponent().appendingPathComponent("outside.txt").path),
                sourceLocation: sourceLocation)
    }

    private func outsideRoot() throws -> [String] {
        try listing(base).filter { !$0.hasPrefix("root/") && !$0.hasPrefix("logs/") }
    }

    /// The default `watch.ignore` patterns, which match regardless of case.
    private func isTemporary(_ name: String) -> Bool {
        let folded = name.lowercased()
        return folded.hasPrefix(".") || [".part", ".filepart", ".tmp", "~"].contains { folded.hasSuffix($0) }
    }

    /// The one quarantine entry: its id, report and original bytes.
    func onlyQuarantined(sourceLocation: SourceLocation = #_sourceLocation) throws -> (id: String, report: Report, drop: URL)? {
        let entries = try FileManager.default.contentsOfDirectory(atPath: quarantine.path)
        expectEqual(entries.count, 1, "expected one quarantine entry, found \(entries)", sourceLocation: sourceLocation)
        guard let id = entries.first else { return nil }
        let directory = quarantine.appendingPathComponent(id)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: directory.path).sorted(), ["drop", "report.json"],
                sourceLocation: sourceLocation)
        let report = try Report.read(directory.appendingPathComponent("report.json"))
        return (id, report, directory.appendingPathComponent("drop"))
    }
}

/// SHA-256 of each file, by path relative to `directory`, through one `sha256sum` run.
func sha256Hexes(_ paths: [String], in directory: URL) throws -> [String: String] {
    guard !paths.isEmpty else { return [:] }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.currentDirectoryURL = directory
    process.arguments = ["-z", "--"] + paths
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    var result: [String: String] = [:]
    for record in data.split(separator: 0) {
        let line = String(decoding: record, as: UTF8.self)
        let hash = String(line.prefix(64))
        result[String(line.dropFirst(66))] = hash
    }
    return result
}
