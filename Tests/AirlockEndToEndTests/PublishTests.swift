import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `airlock publish` against a real nats-server on loopback: each outcome once in
/// the stream, through crashes of either side and an outage.
@Suite("Publishing to NATS JetStream: every outcome once in the stream", .serialized)
struct PublishTests {
    /// Waits until the stream holds `count` messages.
    func waitForStream(_ server: NatsServer, _ count: Int, seconds: Double = 60, extra: [String] = []) -> Bool {
        waitFor(seconds: seconds) {
            usleep(200_000)
            return StreamContents.count(server, extra: extra) >= count
        }
    }

    @Test("without a publish.nats section, airlock publish refuses with status 78")
    func unconfigured() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let result = try airlock(["publish", "--root", sandbox.root.path])
        expectEqual(result.status, 78, "\(result.stderr)")
        expect(result.stderr.contains("publish.nats"))
    }

    @Test("a certificate or credentials file that cannot be read is the configuration's mistake: status 78, before any connection")
    func unreadableFile() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"))
        try sandbox.configurePublish(server, ["tls_ca_file": sandbox.base.appendingPathComponent("missing-ca.pem").path])
        let result = try airlock(["publish", "--root", sandbox.root.path])
        expectEqual(result.status, 78, "\(result.stderr)")
        expect(result.stderr.contains("publish.nats.tls_ca_file"), "\(result.stderr)")
        let password = sandbox.base.appendingPathComponent("password")
        try "no colon here\n".write(to: password, atomically: true, encoding: .utf8)
        try sandbox.configurePublish(server, ["user_password_file": password.path])
        let malformed = try airlock(["publish", "--root", sandbox.root.path])
        expect(malformed.status == 78 && malformed.stderr.contains("USER:PASSWORD"), "\(malformed.stderr)")
    }

    @Test("a flood with the publisher running: every outcome arrives once, in journal order, as airlock events prints it", .needsLeases)
    func floodExactlyOnce() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"))
        try sandbox.configurePublish(server)
        try sandbox.configure("watch", ["settle_milliseconds": 50])
        let daemon = try RunningDaemon(sandbox)
        let publisher = try RunningPublisher(sandbox)
        let names = try sandbox.flood(150, prefix: "flood")
        daemon.waitForVerdicts(names.count, seconds: 120)
        let expected = try sandbox.publishedEvents()
        expectEqual(expected.count, 150)
        expect(waitForStream(server, expected.count), "the stream did not catch up: \(StreamContents.count(server))")
        let contents = try StreamContents.read(server)
        _ = expectStream(contents, holds: expected)
        // In journal order: the stream's order is the order of the cursors.
        expectEqual(contents.messages.map(\.id), expected.map(\.id))
        expectEqual(publisher.stop(), 0)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        let status = try airlock(["status", "--root", sandbox.root.path])
        expect(status.stdout.range(of: #"\npublish: +0 records not yet published; 150 published"#, options: .regularExpression) != nil,
                "\(status.stdout)")
        // The status document, the publisher's file and every payload keep to docs/schema.json.
        let schema = try FieldSchema()
        let statusOutcome = try airlock(["status", "--json", "--root", sandbox.root.path])
        expectEqual(statusOutcome.document(StatusDocument.self)?.publish?.lagRecords, 0)
        let document = try #require(statusOutcome.jsonObjects.first)
        var violations = schema.violations(document, "status --json")
        let state = sandbox.root.appendingPathComponent("state/publish-nats-test%2Ehost.json")
        let progress = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: state)) as? [String: Any])
        violations += schema.violations(progress, "publish-nats-INSTANCE.json")
        for message in contents.messages {
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(message.text.utf8)) as? [String: Any])
            violations += schema.violations(payload, "stream payload")
        }
        expect(violations.isEmpty, "\(violations)")
    }

    @Test("publisher, intake daemon and nats-server killed at random during a flood: none missing, none stored twice", .needsLeases)
    func chaos() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"))
        try sandbox.configurePublish(server)
        try sandbox.configure("watch", ["settle_milliseconds": 50])
        var daemon = try RunningDaemon(sandbox)
        var publisher = try RunningPublisher(sandbox)
        var names: [String] = []
        var kills = [0, 0, 0]
        var generator = SystemRandomNumberGenerator()
        for round in 0..<15 {
            names += try sandbox.flood(25, prefix: "chaos\(round)")
            usleep(UInt32.random(in: 50_000...400_000, using: &generator))
            let victim = Int.random(in: 0...2, using: &generator)
            kills[victim] += 1
            switch victim {
            case 0:
                publisher.kill()
                publisher = try RunningPublisher(sandbox)
            case 1:
                server.kill()
                usleep(UInt32.random(in: 100_000...800_000, using: &generator))
                try server.start()
            default:
                daemon.signal(SIGKILL)
                _ = daemon.waitForExit(seconds: 10)
                daemon = try RunningDaemon(sandbox, label: "daemon-\(round)")
            }
        }
        // Every drop ends once, whichever daemon ended it.
        let ended = waitFor(seconds: 240, every: 0.25) {
            let outcomes = (try? sandbox.publishedEvents()) ?? []
            return outcomes.filter { $0.id.hasSuffix(":accepted") || $0.id.hasSuffix(":rejected") }.count >= names.count
        }
        expect(ended, "not every drop ended")
        let expected = try sandbox.publishedEvents()
        expectEqual(expected.filter { $0.id.hasSuffix(":accepted") || $0.id.hasSuffix(":rejected") }.count, names.count)
        expect(waitForStream(server, expected.count, seconds: 90), "the stream did not catch up: \(StreamContents.count(server))")
        let contents = try StreamContents.read(server)
        let (duplicates, missing) = expectStream(contents, holds: expected)
        print("chaos: \(names.count) drops, \(kills[0]) publisher SIGKILLs, \(kills[1]) nats-server SIGKILLs and restarts, "
              + "\(kills[2]) intake daemon SIGKILLs and restarts; \(contents.messages.count) records in the stream for "
              + "\(expected.count) outcomes, duplicates stored \(duplicates), missing \(missing)")
        expectEqual(publisher.stop(), 0)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
    }

    @Test("nats-server down for the whole flood: intake finishes, status and the progress file say why, the stream is complete once it returns", .needsLeases)
    func outage() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"))
        server.kill()
        try sandbox.configurePublish(server)
        try sandbox.configure("watch", ["settle_milliseconds": 50])
        let daemon = try RunningDaemon(sandbox)
        let publisher = try RunningPublisher(sandbox)
        let names = try sandbox.flood(60, prefix: "outage")
        daemon.waitForVerdicts(names.count, seconds: 120)
        let expected = try sandbox.publishedEvents()
        let behind = waitFor(seconds: 10, every: 0.25) {
            ((try? airlock(["status", "--root", sandbox.root.path]).stdout) ?? "")
                .range(of: "\npublish: +\(expected.count) records not yet published", options: .regularExpression) != nil
        }
        let status = try airlock(["status", "--root", sandbox.root.path])
        expect(behind, "\(status.stdout)")
        expect(status.stdout.contains("last error: connecting to"), "\(status.stdout)")
        try server.start()
        expect(waitForStream(server, expected.count, seconds: 60), "the stream did not catch up after the outage")
        _ = expectStream(try StreamContents.read(server), holds: expected)
        expectEqual(publisher.stop(), 0)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        let metrics = try String(contentsOf: sandbox.root.appendingPathComponent("metrics/airlock.prom"), encoding: .utf8)
        expect(metrics.contains("airlock_publish_lag_records 0"), "\(metrics)")
        expect(metrics.range(of: #"airlock_publish_failures_total [1-9]"#, options: .regularExpression) != nil, "\(metrics)")
    }

    @Test("its cursor lost and the duplicate window past, the publisher resumes after the stream's last message: nothing stored twice")
    func resumeAfterTheStreamsLastMessage() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"))
        try sandbox.configurePublish(server, ["duplicate_window_seconds": 1])
        _ = try sandbox.flood(20, prefix: "first")
        try expectEqual(sandbox.runOnce().status, 0)
        var publisher = try RunningPublisher(sandbox)
        expect(waitForStream(server, 20, seconds: 30))
        expectEqual(publisher.stop(), 0)
        // An operator's purge is an outcome too.
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).sorted()
        let purged = try airlock(["quarantine", "purge", "--root", sandbox.root.path, quarantined[0]])
        expectEqual(purged.status, 0, "\(purged.stderr)")
        let expected = try sandbox.publishedEvents()
        expect(expected.count == 21 && expected.last?.id.hasSuffix(":purged") == true)
        // As if the publisher had died before it ever saved its cursor, and stayed down past the window.
        let state = sandbox.root.appendingPathComponent("state")
        for name in try FileManager.default.contentsOfDirectory(atPath: state.path) where name.hasPrefix("publish-nats-") {
            try FileManager.default.removeItem(at: state.appendingPathComponent(name))
        }
        usleep(2_500_000)
        // The stream exists with the one-second window; a longer one configured now is only warned about.
        try sandbox.configurePublish(server, ["duplicate_window_seconds": 60])
        publisher = try RunningPublisher(sandbox, label: "publisher-again")
        expect(waitForStream(server, expected.count, seconds: 30))
        usleep(500_000)
        expectEqual(publisher.stop(), 0)
        _ = expectStream(try StreamContents.read(server), holds: expected)
        let log = try String(contentsOf: publisher.stderrURL, encoding: .utf8)
        expect(log.contains("(the stream's last message)"), "\(log)")
        expect(log.contains("keeps message ids for 1 s, less than publish.nats.duplicate_window_seconds (60 s)"), "\(log)")
    }

    /// A throwaway CA, a server certificate for 127.0.0.1 and a client certificate, by openssl.
    func makeCertificates(in directory: URL) throws {
        let script = """
            set -e
            cd "$1"
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=airlock-test-ca
            for name in server client; do
                openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $name.key -out $name.csr -subj /CN=$name
                printf 'subjectAltName=IP:127.0.0.1\n' > $name.ext
                openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $name.pem -days 1 -extfile $name.ext
            done
            """
        let result = try runTool("/bin/sh", ["-c", script, "sh", directory.path])
        try #require(result.status == 0, "openssl: \(result.output)")
    }

    @Test("TLS with a client certificate and a password from nats-server's own configuration: refused with a wrong one, published with the right one")
    func tlsAndCredentials() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let certificates = sandbox.logs.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: certificates, withIntermediateDirectories: false)
        try makeCertificates(in: certificates)
        let file = { (name: String) in certificates.appendingPathComponent(name).path }
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"), extra: """
            tls { cert_file: "\(file("server.pem"))", key_file: "\(file("server.key"))", ca_file: "\(file("ca.pem"))", verify: true }
            authorization { users = [ { user: "airlock", password: "right horse battery" } ] }
            """)
        let passwords = sandbox.logs.appendingPathComponent("nats.password")
        try "airlock:wrong\n".write(to: passwords, atomically: true, encoding: .utf8)
        try sandbox.configurePublish(server, ["servers": ["tls://127.0.0.1:\(server.port)"], "tls_ca_file": file("ca.pem"),
                                              "tls_cert_file": file("client.pem"), "tls_key_file": file("client.key"),
                                              "user_password_file": passwords.path])
        let names = try sandbox.flood(10, prefix: "tls")
        try expectEqual(sandbox.runOnce().status, 0)
        let expected = try sandbox.publishedEvents()
        expectEqual(expected.count, names.count)
        var publisher = try RunningPublisher(sandbox)
        let refused = waitFor(seconds: 20, every: 0.25) {
            ((try? airlock(["status", "--root", sandbox.root.path]).stdout) ?? "").contains("Authorization Violation")
        }
        expect(refused, "\((try? airlock(["status", "--root", sandbox.root.path]).stdout) ?? "")")
        expectEqual(publisher.stop(), 0)
        try "airlock:right horse battery\n".write(to: passwords, atomically: true, encoding: .utf8)
        publisher = try RunningPublisher(sandbox)
        let client = ["--tls-ca", file("ca.pem"), "--tls-cert", file("client.pem"), "--tls-key", file("client.key"),
                      "--user-password-file", passwords.path]
        let tlsServer = "tls://127.0.0.1:\(server.port)"
        expect(waitFor(seconds: 30) { usleep(200_000); return StreamContents.count(server, url: tlsServer, extra: client) >= expected.count })
        _ = expectStream(try StreamContents.read(server, url: tlsServer, extra: client), holds: expected)
        expectEqual(publisher.stop(), 0)
        // Without the client certificate the server refuses the reader too.
        expectEqual(StreamContents.count(server, url: tlsServer, extra: ["--tls-ca", file("ca.pem"), "--user-password-file", passwords.path]), -1)
    }

    @Test("a NATS credentials file (user JWT and nkey seed) against an operator-mode nats-server: published, and refused without it")
    func credentialsFile() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let accounts = sandbox.logs.appendingPathComponent("accounts")
        try FileManager.default.createDirectory(at: accounts, withIntermediateDirectories: false)
        let made = try runTool("/usr/bin/python3", [Binary.repository.appendingPathComponent("Tests/Helpers/nats_creds.py").path, accounts.path])
        try #require(made.status == 0, "\(made.output)")
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"),
                                    extra: try String(contentsOf: accounts.appendingPathComponent("accounts.conf"), encoding: .utf8))
        let creds = accounts.appendingPathComponent("user.creds").path
        try sandbox.configurePublish(server, ["creds_file": creds])
        _ = try sandbox.flood(5, prefix: "creds")
        try expectEqual(sandbox.runOnce().status, 0)
        let expected = try sandbox.publishedEvents()
        let publisher = try RunningPublisher(sandbox)
        expect(waitFor(seconds: 30) { usleep(200_000); return StreamContents.count(server, extra: ["--creds", creds]) >= expected.count })
        expectEqual(publisher.stop(), 0)
        _ = expectStream(try StreamContents.read(server, extra: ["--creds", creds]), holds: expected)
        expectEqual(StreamContents.count(server), -1, "the server let a client without credentials read the stream")
    }
}
