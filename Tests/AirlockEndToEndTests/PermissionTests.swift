import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real users and groups for the three parties, made with groupadd and useradd
/// the first time a test needs them and removed when the test process exits.
/// Their names end in this process's id, so that runs side by side on one machine
/// never share them (nor remove each other's); a run that died before removing
/// its own is swept by the next one.
enum Parties {
    static let prefix = "airlock-t-"
    static let tag = "-\(getpid())"
    static let producers = prefix + "drop" + tag
    static let consumers = prefix + "read" + tag
    static let service = prefix + "svc" + tag
    static let producer = prefix + "prod1" + tag
    static let otherProducer = prefix + "prod2" + tag
    static let consumer = prefix + "cons" + tag
    /// A second consumer group, with a member of its own, for acknowledgements.
    static let otherConsumers = prefix + "read2" + tag
    static let otherConsumer = prefix + "cons2" + tag

    private static let groups = [producers, consumers, otherConsumers]
    private static let members = [(service, consumers), (producer, producers), (otherProducer, producers), (consumer, consumers),
                                  (otherConsumer, otherConsumers)]

    /// Whether this machine can host the parties at all: root, and the tools.
    static let available = getuid() == 0
        && ["/usr/sbin/useradd", "/usr/sbin/groupadd", "/usr/sbin/userdel", "/usr/sbin/groupdel", "/usr/bin/setpriv", "/usr/bin/setfacl"]
        .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

    /// Fails the test when the users and groups could not be made where they
    /// can be: a premise that failed, not an environment to skip.
    static func require(sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(made, "could not create the test users and groups with groupadd and useradd", sourceLocation: sourceLocation)
    }

    private static let made: Bool = {
        guard available else { return false }
        removeLeftovers()
        // Registered before the first useradd, so that whatever part was made is removed at exit.
        atexit { Parties.remove(users: Parties.members.map(\.0), groups: Parties.groups) }
        for group in groups { _ = try? runTool("/usr/sbin/groupadd", ["--system", group]) }
        for (user, group) in members {
            _ = try? runTool("/usr/sbin/useradd", ["--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                                                  "--shell", "/usr/sbin/nologin", "--groups", group, user])
        }
        // The service gives each consumer group its acknowledgement directory, so it belongs to both.
        _ = try? runTool("/usr/sbin/usermod", ["-aG", otherConsumers, service])
        return members.allSatisfy { getpwnam($0.0) != nil } && groups.allSatisfy { getgrnam($0) != nil }
    }()

    /// userdel (which removes each user's own group too), then groupdel.
    private static func remove(users: [String], groups: [String]) {
        for user in users where getpwnam(user) != nil { _ = try? runTool("/usr/sbin/userdel", [user]) }
        for group in groups where getgrnam(group) != nil { _ = try? runTool("/usr/sbin/groupdel", [group]) }
    }

    /// Removes the parties of runs whose process is gone (killed before their exit handler ran).
    private static func removeLeftovers() {
        func stale(_ file: String) -> [String] {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line -> String? in
                let name = String(line.prefix { $0 != ":" })
                guard name.hasPrefix(prefix), let dash = name.lastIndex(of: "-"),
                      let pid = pid_t(name[name.index(after: dash)...]), pid != getpid() else { return nil }
                return kill(pid, 0) == 0 || errno == EPERM ? nil : name
            }
        }
        remove(users: stale("/etc/passwd"), groups: stale("/etc/group"))
    }

    /// Runs `script` with /bin/sh as `user` (its own uid, primary group and
    /// supplementary groups, umask 022 unless the script sets one); $1… are `arguments`.
    static func run(_ user: String, _ script: String, _ arguments: [String] = []) throws -> (status: Int32, output: String) {
        try runTool("/usr/bin/setpriv", ["--reuid", user, "--regid", user, "--init-groups", "--", "/bin/sh", "-c",
                                         "umask 022; " + script, "sh"] + arguments)
    }
}

@Suite("deploy/: service user, producers and consumers each get what they need and nothing more",
       .enabled(if: Parties.available, "needs root (to create users and switch to them), setpriv, setfacl (package acl) and useradd"))
struct PermissionTests {
    init() throws { try Parties.require() }

    /// A root laid out as deploy/tmpfiles.d does it, for the test's users.
    static func layOut(_ sandbox: Sandbox) throws {
        try sandbox.initialise()
        try sandbox.configure("outbox", ["group": Parties.consumers, "file_mode": "0640", "directory_mode": "0750",
                                         "acknowledging_groups": [Parties.consumers, Parties.otherConsumers]])
        // The sandbox's own directory is root's and private; the parties must pass through it.
        expectEqual(chmod(sandbox.base.path, 0o711), 0)
        let root = sandbox.root.path
        let steps: [[String]] = [
            ["/bin/chown", "-R", "\(Parties.service):\(Parties.service)", root],
            ["/bin/chmod", "0755", root],
            ["/bin/chown", "\(Parties.service):\(Parties.producers)", root + "/inbox"],
            ["/bin/chmod", "1730", root + "/inbox"],
            ["/usr/bin/setfacl", "-m", "d:u:\(Parties.service):r", root + "/inbox"],
            ["/bin/chown", "\(Parties.service):\(Parties.consumers)", root + "/outbox"],
            ["/bin/chmod", "0750", root + "/outbox"],
        ]
        for step in steps {
            let result = try runTool(step[0], Array(step.dropFirst()))
            try #require(result.status == 0, "\(step): \(result.output)")
        }
    }

    static func allowed(_ user: String, _ what: String, _ script: String, _ arguments: [String] = [],
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try Parties.run(user, script, arguments)
        expectEqual(result.status, 0, "\(user) should be able to \(what): \(result.output)", sourceLocation: sourceLocation)
    }

    static func refused(_ user: String, _ what: String, _ script: String, _ arguments: [String] = [],
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try Parties.run(user, script, arguments)
        expect(result.status != 0, "\(user) must not be able to \(what)", sourceLocation: sourceLocation)
        expect(result.output.contains("Permission denied") || result.output.contains("Operation not permitted"),
                "\(user) \(what): \(result.output)", sourceLocation: sourceLocation)
    }

    @Test("producers drop by rename and by one write and cannot see or touch anything else; consumers read and hand back entries")
    func threeParties() throws {
        let sandbox = try Sandbox()
        try Self.layOut(sandbox)
        let root = sandbox.root.path, inbox = sandbox.inbox.path
        let zip = Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip").path
        let (prod, other, cons, svc) = (Parties.producer, Parties.otherProducer, Parties.consumer, Parties.service)

        try Self.allowed(prod, "drop by one write", #"cat "$1" > "$2/written.zip""#, [zip, inbox])
        try Self.allowed(prod, "drop by rename", #"cp "$1" "$2/.renamed.zip.part" && mv "$2/.renamed.zip.part" "$2/renamed.zip""#, [zip, inbox])
        try Self.refused(prod, "list the inbox", #"ls "$1""#, [inbox])
        try Self.refused(other, "read another producer's drop", #"cat "$1/written.zip""#, [inbox])
        try Self.refused(other, "overwrite another producer's drop", #"echo x > "$1/written.zip""#, [inbox])
        try Self.refused(other, "remove another producer's drop", #"rm -f "$1/written.zip""#, [inbox])
        try Self.refused(other, "replace another producer's drop by rename",
                         #"echo x > "$1/.mine" && mv -f "$1/.mine" "$1/written.zip""#, [inbox])
        for party in [prod, cons] {
            try Self.refused(party, "read the state", #"ls "$1/state""#, [root])
            try Self.refused(party, "read the quarantine", #"ls "$1/quarantine""#, [root])
            try Self.refused(party, "read the configuration's directory for writing", #"touch "$1/airlock.json""#, [root])
        }
        try Self.refused(prod, "read the outbox", #"ls "$1/outbox""#, [root])
        try Self.refused(cons, "drop into the inbox", #"echo x > "$1/sneaky.zip""#, [inbox])

        // The service, under the unit's umask, takes both drops in.
        let airlockBinary = Binary.airlock
        let ran = try Parties.run(svc, #"umask 077; exec "$1" run --once --root "$2""#, [airlockBinary, root])
        expectEqual(ran.status, 0, "\(ran.output)")
        let entries = try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted()
        expectEqual(entries, ["renamed", "written"], "\(ran.output)")
        try Self.expectModes(sandbox.outbox.appendingPathComponent("written"))

        try Self.allowed(cons, "read every accepted entry", #"ls -R "$1" >/dev/null && find "$1" -type f -exec cat {} + >/dev/null"#,
                         [sandbox.outbox.path])
        let firstFile = try #require(try sandbox.listing(sandbox.outbox.appendingPathComponent("written")).first { !$0.hasSuffix("/") })
        try Self.refused(cons, "write into an entry", #"touch "$1/written/new-file""#, [sandbox.outbox.path])
        try Self.refused(cons, "change an entry's file", #"echo x >> "$1""#, [sandbox.outbox.appendingPathComponent("written/" + firstFile).path])
        try Self.refused(cons, "remove a file inside an entry", #"rm -f "$1""#, [sandbox.outbox.appendingPathComponent("written/" + firstFile).path])
        try Self.refused(prod, "read an entry", #"ls "$1/written""#, [sandbox.outbox.path])
        try Self.refused(cons, "rename an entry", #"mv "$1/written" "$1/.done-written""#, [sandbox.outbox.path])
        let id = try HandBackTests.id(of: sandbox.outbox.appendingPathComponent("written"))
        try Self.allowed(cons, "acknowledge a processed entry", #"touch "$1/acks/$2/$3""#, [root, Parties.consumers, id])
        try Self.allowed(Parties.otherConsumer, "acknowledge a processed entry", #"touch "$1/acks/$2/$3""#, [root, Parties.otherConsumers, id])

        let swept = try Parties.run(svc, #"exec "$1" outbox sweep --root "$2""#, [airlockBinary, root])
        expectEqual(swept.status, 0, "\(swept.output)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["renamed"])
        try sandbox.expectInvariants()
    }

    /// Every directory 0750 and file 0640, group consumers, owner the service, beneath `entry`.
    static func expectModes(_ entry: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let consumers = try #require(getgrnam(Parties.consumers)).pointee.gr_gid
        let service = try #require(getpwnam(Parties.service)).pointee.pw_uid
        var paths = [entry.path]
        paths += try FileManager.default.subpathsOfDirectory(atPath: entry.path).map { entry.path + "/" + $0 }
        for path in paths {
            var st = stat()
            try #require(lstat(path, &st) == 0)
            let isDirectory = st.st_mode & S_IFMT == S_IFDIR
            expectEqual(st.st_mode & 0o7777, (isDirectory ? 0o750 : 0o640), "\(path): \(String(st.st_mode & 0o7777, radix: 8))",
                    sourceLocation: sourceLocation)
            expect(st.st_gid == consumers && st.st_uid == service, "\(path): owner \(st.st_uid):\(st.st_gid)", sourceLocation: sourceLocation)
        }
    }

    @Test("the daemon's metrics, by default, are readable by another user (a textfile collector) under the unit's umask")
    func metricsReadableByCollector() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("metrics", ["interval_seconds": 1])
        expectEqual(chmod(sandbox.base.path, 0o711), 0)
        let root = sandbox.root.path
        _ = try runTool("/bin/chown", ["-R", "\(Parties.service):\(Parties.service)", root])
        _ = try runTool("/bin/chmod", ["0755", root])
        // As the unit runs it: the service user with the unit's capabilities.
        let wrapper = UnitCapabilities.wrapper()
        let ran = try runTool(wrapper[0], Array(wrapper.dropFirst()) + ["/bin/sh", "-c", #"umask 077; exec timeout -s TERM 4 "$1" run --root "$2""#,
                                                                      "sh", Binary.airlock, root])
        expect(ran.status == 0 || ran.status == 124, "\(ran.output)")
        let path = root + "/metrics/airlock.prom"
        var st = stat()
        try #require(lstat(path, &st) == 0, "no metrics at \(path): \(ran.output)")
        expectEqual(st.st_mode & 0o777, 0o644)
        let read = try Parties.run(Parties.consumer, #"cat "$1""#, [path])
        expectEqual(read.status, 0, "\(read.output)")
        try PrometheusText.validate(read.output)
        expect(read.output.contains(#"airlock_decoder_confinement{mechanism="landlock",state="#), "\(read.output)")
        expect(read.output.contains("airlock_unconfined_deferrals_total 0"))
    }
}
