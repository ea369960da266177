import AirlockTestSupport
import Foundation
import Testing

/// `make install` of the debug build into a DESTDIR: the layout, the rewritten
/// paths, and an installed airlock that finds its decoders in libexec.
@Suite("make install: PREFIX and DESTDIR, decoders in libexec/airlock, units, man pages, completion",
       .enabled(if: ["/usr/bin/make", "/usr/bin/scdoc"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
                "needs make and scdoc (package scdoc)"),
       .enabled(if: Requirement.writableRepository, "make install builds the man pages into the repository's .build/, which this user cannot write"))
struct InstallTests {
    static let expected = [
        "usr/bin/airlock", "usr/libexec/airlock/airlock-decoder", "usr/libexec/airlock/airlock-keyed-decoder",
        "usr/libexec/airlock/airlock-publisher", "usr/lib/systemd/system/airlock-publish.service",
        "usr/share/doc/airlock/examples/nats-consumer.py", "usr/lib/systemd/system/airlock.service", "usr/lib/systemd/system/airlock@.service",
        "usr/lib/systemd/system/airlock-sweep.service", "usr/lib/systemd/system/airlock-sweep.timer",
        "usr/lib/tmpfiles.d/airlock.conf", "usr/lib/sysusers.d/airlock.conf",
        "usr/share/airlock/airlock.json", "usr/share/doc/airlock/examples/airlock.json",
        "usr/share/doc/airlock/README.md", "usr/share/doc/airlock/README.deploy.md",
        "usr/share/man/man1/airlock.1", "usr/share/man/man5/airlock.json.5",
        "usr/share/bash-completion/completions/airlock", "etc/airlock/airlock.json",
        "usr/share/cockpit/airlock/manifest.json", "usr/share/cockpit/airlock/index.html", "usr/share/cockpit/airlock/airlock.js",
        "usr/share/cockpit/airlock/text.js", "usr/share/cockpit/airlock/chart.js", "usr/share/cockpit/airlock/airlock.css",
        "etc/sudoers.d/airlock",
    ]

    @Test("install lays out PREFIX=/usr under DESTDIR, the installed airlock decodes, uninstall removes it all")
    func installIntoDestdir() throws {
        let sandbox = try Sandbox()
        let destdir = sandbox.logs.appendingPathComponent("destdir")
        let build = URL(fileURLWithPath: Binary.airlock).deletingLastPathComponent().path
        let installed = try runTool("/usr/bin/make", ["-C", Binary.repository.path, "--no-print-directory", "install",
                                                     "PREFIX=/usr", "DESTDIR=\(destdir.path)", "BUILD=\(build)"])
        try #require(installed.status == 0, "\(installed.output)")
        let files = Set(try FileManager.default.subpathsOfDirectory(atPath: destdir.path).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: destdir.appendingPathComponent(path).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        })
        expectEqual(files, Set(Self.expected))
        for path in Self.expected where path.hasPrefix("usr/lib/") || path.hasPrefix("usr/share/airlock") || path.hasPrefix("etc/") {
            let text = try String(contentsOf: destdir.appendingPathComponent(path), encoding: .utf8)
            expect(!text.contains("/usr/local"), "\(path) still names /usr/local")
        }
        let unit = try String(contentsOf: destdir.appendingPathComponent("usr/lib/systemd/system/airlock.service"), encoding: .utf8)
        expect(unit.contains("ExecStart=/usr/bin/airlock run\n"), "the root comes from /etc/airlock/airlock.json")
        expect(unit.contains("Documentation=file:///usr/share/doc/airlock/README.md"))
        // The page and the sudo rule name the installed airlock and the system root.
        let page = try String(contentsOf: destdir.appendingPathComponent("usr/share/cockpit/airlock/airlock.js"), encoding: .utf8)
        expect(page.contains(#"command: "/usr/bin/airlock", user: "airlock", root: "/var/lib/airlock""#))
        let rule = try String(contentsOf: destdir.appendingPathComponent("etc/sudoers.d/airlock"), encoding: .utf8)
        expect(rule.contains("= /usr/bin/airlock ^(quarantine") && rule.contains(" --root /var/lib/airlock$"), "\(rule)")
        let tmpfiles = try String(contentsOf: destdir.appendingPathComponent("usr/lib/tmpfiles.d/airlock.conf"), encoding: .utf8)
        expect(!tmpfiles.contains("/var/lib/airlock/airlock.json"), "the configuration lives in /etc/airlock, not in the root")
        let man = try String(contentsOf: destdir.appendingPathComponent("usr/share/man/man1/airlock.1"), encoding: .utf8)
        expect(man.contains(".TH \"airlock\" \"1\""), "scdoc output: \(man.prefix(200))")
        try expectEqual(runTool("/bin/bash", ["-n", destdir.appendingPathComponent("usr/share/bash-completion/completions/airlock").path]).status, 0)

        // The installed binary, not the build tree's: its decoders are found from its own path.
        let airlockPath = destdir.appendingPathComponent("usr/bin/airlock").path
        try sandbox.initialise()
        let doctor = try runTool(airlockPath, ["doctor", "--json", "--root", sandbox.root.path])
        expect(doctor.status == 0 && doctor.output.contains(#"/logs/destdir/usr/libexec/airlock","#), "\(doctor.output)")
        try sandbox.drop(Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip")), as: "a.zip")
        let ran = try runTool(airlockPath, ["run", "--once", "--root", sandbox.root.path])
        expectEqual(ran.status, 0, "\(ran.output)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["a"])
        try sandbox.expectInvariants()

        let removed = try runTool("/usr/bin/make", ["-C", Binary.repository.path, "--no-print-directory", "uninstall",
                                                   "PREFIX=/usr", "DESTDIR=\(destdir.path)"])
        expectEqual(removed.status, 0, "\(removed.output)")
        let left = try FileManager.default.subpathsOfDirectory(atPath: destdir.path).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: destdir.appendingPathComponent(path).path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        expectEqual(left, ["etc/airlock/airlock.json"], "left after uninstall (only the operator's configuration): \(left)")
    }
}
