import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The service run as deploy/airlock.service runs it: its own user, the unit's
/// two ambient capabilities and system-call filter; producers as other users.
enum UnitCapabilities {
    static let granted = "+dac_read_search,+lease"

    /// setpriv as the service user with the unit's capabilities, then (if given) the unit's filter.
    static func wrapper(capabilities: String? = granted, filter: [String] = []) -> [String] {
        var arguments = ["/usr/bin/setpriv", "--reuid", Parties.service, "--regid", Parties.service, "--init-groups"]
        if let capabilities { arguments += ["--inh-caps=\(capabilities)", "--ambient-caps=\(capabilities)"] }
        return arguments + ["--"] + filter
    }

    /// The capability masks /proc/PID/status shows (`CapEff` …), nil once the process is gone.
    static func sets(_ pid: Int32) -> [String: UInt64]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var sets: [String: UInt64] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("Cap") {
            let parts = line.split(separator: ":")
            if parts.count == 2 { sets[String(parts[0])] = UInt64(parts[1].trimmingCharacters(in: .whitespaces), radix: 16) }
        }
        return sets
    }

    /// A producer's drop created with mode 0600 (as sftp put, scp and rsync -a
    /// create a 0600 local file): the mode's group bits become the ACL's mask, so
    /// the inbox's default ACL entry for the service no longer lets it read.
    static func dropPrivately(_ source: String, _ inbox: String, as name: String) throws {
        let script = #"python3 -c 'import os, sys; fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600); os.write(fd, open(sys.argv[1], "rb").read()); os.close(fd)' "$1" "$2/$3""#
        let made = try Parties.run(Parties.producer, script, [source, inbox, name])
        try #require(made.status == 0, "the producer could not drop \(name): \(made.output)")
        let unreadable = try Parties.run(Parties.service, #"cat "$1/$2" >/dev/null"#, [inbox, name])
        try #require(unreadable.status != 0, "premise: without CAP_DAC_READ_SEARCH the service cannot read a 0600 drop")
    }
}

@Suite("deploy/: the unit's capabilities read every producer's drop, reach no decoder, and leases fail closed",
       .serialized, .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct CapabilityTests {
    init() throws { try Parties.require() }

    static let zip = Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip").path

    func sha256(_ path: String) throws -> String {
        let url = URL(fileURLWithPath: path)
        return try #require(try sha256Hexes([url.lastPathComponent], in: url.deletingLastPathComponent())[url.lastPathComponent])
    }

    @Test("under the unit's capabilities and filter a mode-0600 drop is accepted, and each decoder child holds no capability at all while it decodes")
    func privateDropAndCapabilityFreeChildren() throws {
        let sandbox = try Sandbox()
        try PermissionTests.layOut(sandbox)
        try sandbox.configure("watch", ["settle_milliseconds": 100])
        let filter = try UnitFilter.load().wrapper(in: sandbox.logs)
        let daemon = try RunningDaemon(sandbox, environment: ["AIRLOCK_TEST_DECODER_FAULT": "delay"],
                                       under: UnitCapabilities.wrapper(filter: filter))
        let supervisor = try #require(UnitCapabilities.sets(daemon.process.processIdentifier))
        let wanted: UInt64 = (1 << 2) | (1 << 28)
        expectEqual(supervisor["CapEff"], wanted, "premise: the daemon holds CAP_DAC_READ_SEARCH and CAP_LEASE: \(supervisor)")
        expect(supervisor["CapAmb"] == 0 && supervisor["CapInh"] == 0, "the daemon passes nothing on: \(supervisor)")

        try UnitCapabilities.dropPrivately(Self.zip, sandbox.inbox.path, as: "private.zip")
        // The drop's decoder sleeps 2 s after confining itself ("delay"); every decoder
        // process seen meanwhile (templates and the drop's child) is looked at.
        var seen: [Int32: [String: UInt64]] = [:]
        var decodingSeen = false
        let decided = waitFor(seconds: 30) {
            for pid in ProcessTable.processes(commandLineContaining: "airlock-decoder", parent: daemon.process.processIdentifier) {
                guard let sets = UnitCapabilities.sets(pid) else { continue }
                seen[pid] = sets
                let drop = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/3")) ?? ""
                if drop.contains("state/claimed/") { decodingSeen = true }
            }
            return !daemon.events.isEmpty
        }
        expect(decided, "no verdict within 30 s: \(daemon.stderr)")
        expect(decodingSeen, "the decoding child was seen holding the drop: \(seen)")
        for (pid, sets) in seen {
            for set in ["CapEff", "CapPrm", "CapInh", "CapAmb"] {
                expectEqual(sets[set], 0, "decoder \(pid) has \(set) \(String(sets[set] ?? 0, radix: 16))")
            }
        }
        let events = daemon.waitForVerdicts(1)
        expect(events.count == 1 && events.first?.kind == .accepted, "\(events) \(daemon.stderr)")
        expectEqual(events.first?.accepted?.sha256, (try sha256(Self.zip)))
        expectEqual(events.first?.accepted?.uploader, Parties.producer)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
        try sandbox.expectInvariants()
    }

    @Test("without CAP_LEASE the daemon does not start (77, naming the capability and how to grant it) unless watch.completion is renamed")
    func leasesFailClosed() throws {
        let sandbox = try Sandbox()
        try PermissionTests.layOut(sandbox)
        let refused = try airlock(["run", "--root", sandbox.root.path], under: UnitCapabilities.wrapper(capabilities: nil))
        expectEqual(refused.status, 77, "\(refused.stderr)")
        for words in ["CAP_LEASE", "AmbientCapabilities=CAP_LEASE", "setpriv", "--ambient-caps=+lease", "\"completion\": \"renamed\""] {
            expect(refused.stderr.contains(words), "the refusal names \(words): \(refused.stderr)")
        }
        expect(!refused.stderr.contains("the kernel refuses read leases"))

        try sandbox.configure("watch", ["completion": "renamed", "settle_milliseconds": 100])
        let daemon = try RunningDaemon(sandbox, under: UnitCapabilities.wrapper(capabilities: nil))
        try PermissionTests.allowed(Parties.producer, "drop by rename",
                                    #"cp "$1" "$2/.r.zip.part" && mv "$2/.r.zip.part" "$2/r.zip""#, [Self.zip, sandbox.inbox.path])
        let events = daemon.waitForVerdicts(1)
        expectEqual(events.first?.kind, .accepted, "\(events) \(daemon.stderr)")
        let status = try airlock(["status", "--root", sandbox.root.path])
        expect(status.stdout.contains("completion:    renamed"), "\(status.stdout)")
        let doctor = try airlock(["doctor", "--root", sandbox.root.path])
        expect(doctor.stdout.contains("completion:    renamed"), "\(doctor.stdout)")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
    }

    @Test("a quarantined mode-0600 drop: contents says why it cannot be read without the capability and lists it as root; released, it is read again")
    func privateQuarantineEntry() throws {
        let sandbox = try Sandbox()
        try PermissionTests.layOut(sandbox)
        let traversal = Samples.fixture("zip-traversal.zip").path
        try UnitCapabilities.dropPrivately(traversal, sandbox.inbox.path, as: "evil.zip")
        let first = try airlock(["run", "--once", "--root", sandbox.root.path], under: UnitCapabilities.wrapper())
        expectEqual(first.events.first?.reason, "unsafe-path", "\(first.stdout) \(first.stderr)")
        let id = try #require(first.events.first?.id)

        let plain = try airlock(["quarantine", "contents", id, "--root", sandbox.root.path], under: UnitCapabilities.wrapper(capabilities: nil))
        expect(plain.status != 0)
        expect(!plain.stderr.contains("holds no drop"), "\(plain.stderr)")
        expect(plain.stderr.contains("mode 0600") && plain.stderr.contains("CAP_DAC_READ_SEARCH"), "\(plain.stderr)")
        let asRoot = try airlock(["quarantine", "contents", id, "--root", sandbox.root.path])
        expect(asRoot.status == 0 && asRoot.stdout.contains("outside"), "\(asRoot.stdout) \(asRoot.stderr)")

        try expectEqual(airlock(["quarantine", "release", id, "--root", sandbox.root.path]).status, 0)
        let second = try airlock(["run", "--once", "--root", sandbox.root.path], under: UnitCapabilities.wrapper())
        expect(second.events.count == 1 && second.events.first?.reason == "unsafe-path",
                "read again, judged on its bytes: \(second.stdout) \(second.stderr)")
    }
}
