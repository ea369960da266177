import AirlockTestSupport
import Foundation
import Testing

@Suite("deploy/: the systemd units")
struct DeployTests {
    static let analyze = "/usr/bin/systemd-analyze"

    @Test("systemd-analyze verify passes on airlock.service, an instance of airlock@.service and airlock-publish.service",
          .enabled(if: FileManager.default.isExecutableFile(atPath: analyze), "needs systemd-analyze (package systemd)"),
          arguments: ["airlock.service", "airlock@.service", "airlock-publish.service"])
    func verify(_ unit: String) throws {
        let analyze = Self.analyze
        let sandbox = try Sandbox()
        // verify checks that ExecStart's program exists: point the unit at the built one.
        let binaries = URL(fileURLWithPath: Binary.airlock).deletingLastPathComponent().path + "/"
        let text = try String(contentsOf: Binary.repository.appendingPathComponent("deploy").appendingPathComponent(unit), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/", with: binaries)
        let name = unit == "airlock@.service" ? "airlock@test.service" : unit
        let file = sandbox.base.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        let result = try runTool(analyze, ["verify", file.path])
        expectEqual(result.status, 0, "\(result.output)")
        expect(!result.output.contains(name), "warnings about the unit: \(result.output)")
    }
}
