import AirlockTestSupport
import Foundation
import Testing

/// The chaos soak (soak/soak.py, `make soak`) in its short form: a few seconds of
/// producers and a few SIGKILLs of the daemon, with all of its end checks.
@Suite("Chaos soak, short: drops under SIGKILL and restart end once, journalled once", .needsLeases)
struct SoakTests {
    @Test("a few seconds of valid and hostile drops while the daemon is killed and restarted")
    func shortSoak() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Binary.repository.appendingPathComponent("soak/soak.py").path,
                             "--airlock", Binary.airlock, "--seconds", "8", "--producers", "2",
                             "--kill-min", "0.4", "--kill-max", "1.5"]
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("AIRLOCK_TEST_") { environment.removeValue(forKey: key) }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        expectEqual(process.terminationStatus, 0, "\(text)")
        expect(text.contains("problems   0"), "\(text)")
        let kills = text.split(separator: "\n").first { $0.hasPrefix("kills") }?
            .split(separator: " ").dropFirst().first { !$0.isEmpty }.flatMap { Int($0) } ?? 0
        expect(kills >= 2, "the daemon was to be killed several times: \(text)")
        let drops = text.split(separator: "\n").first { $0.hasPrefix("drops") }?
            .split(separator: " ").dropFirst().first { !$0.isEmpty }.flatMap { Int($0) } ?? 0
        expect(drops >= 20, "\(text)")
    }

    @Test("a fleet: three instances on one root, killed, frozen past their take-over and restarted, end every drop once")
    func shortFleetSoak() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Binary.repository.appendingPathComponent("soak/fleet.py").path,
                             "--airlock", Binary.airlock, "--seconds", "15", "--producers", "2", "--chaos-min", "0.5", "--chaos-max", "2"]
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("AIRLOCK_TEST_") { environment.removeValue(forKey: key) }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        expectEqual(process.terminationStatus, 0, "\(text)")
        expect(text.contains("problems   0"), "\(text)")
        func figure(_ prefix: String) -> Int {
            text.split(separator: "\n").first { $0.hasPrefix(prefix) }?
                .split(separator: " ").dropFirst().first { !$0.isEmpty }.flatMap { Int($0) } ?? 0
        }
        expect(figure("drops") >= 20, "\(text)")
        expect(figure("kills") >= 1, "instances were to be killed: \(text)")
        expect(figure("freezes") >= 1 && text.contains("take-overs seen"), "an instance was to be frozen past its take-over: \(text)")
    }
}
