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
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("publish.nats"))
    }

    @Test("a flood with the publisher running: every outcome arrives once, in journal order, as airlock events prints it")
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
        #expect(expected.count == 150)
        #expect(waitForStream(server, expected.count), "the stream did not catch up: \(StreamContents.count(server))")
        let contents = try StreamContents.read(server)
        _ = expectStream(contents, holds: expected)
        // In journal order: the stream's order is the order of the cursors.
        #expect(contents.messages.map(\.id) == expected.map(\.id))
        #expect(publisher.stop() == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(seconds: 15) == 0)
        let status = try airlock(["status", "--root", sandbox.root.path])
        #expect(status.stdout.range(of: #"\npublish: +0 records not yet published; 150 published"#, options: .regularExpression) != nil,
                "\(status.stdout)")
    }

    @Test("publisher SIGKILLed and nats-server killed and restarted at random during a flood: none missing, none stored twice")
    func chaos() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"))
        try sandbox.configurePublish(server)
        try sandbox.configure("watch", ["settle_milliseconds": 50])
        let daemon = try RunningDaemon(sandbox)
        var publisher = try RunningPublisher(sandbox)
        var names: [String] = []
        var publisherKills = 0, serverKills = 0
        var generator = SystemRandomNumberGenerator()
        for round in 0..<12 {
            names += try sandbox.flood(25, prefix: "chaos\(round)")
            usleep(UInt32.random(in: 50_000...400_000, using: &generator))
            if Bool.random(using: &generator) {
                publisher.kill()
                publisherKills += 1
                publisher = try RunningPublisher(sandbox)
            } else {
                server.kill()
                serverKills += 1
                usleep(UInt32.random(in: 100_000...800_000, using: &generator))
                try server.start()
            }
        }
        daemon.waitForVerdicts(names.count, seconds: 180)
        let expected = try sandbox.publishedEvents()
        #expect(waitForStream(server, expected.count, seconds: 90), "the stream did not catch up: \(StreamContents.count(server))")
        let contents = try StreamContents.read(server)
        let (duplicates, missing) = expectStream(contents, holds: expected)
        print("chaos: \(names.count) drops, \(publisherKills) publisher SIGKILLs, \(serverKills) nats-server kills and restarts, "
              + "\(contents.messages.count) records in the stream of \(expected.count) outcomes, duplicates stored \(duplicates), missing \(missing)")
        #expect(publisherKills + serverKills == 12)
        #expect(publisher.stop() == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(seconds: 15) == 0)
    }

    @Test("nats-server down for the whole flood: intake finishes, status and the progress file say why, the stream is complete once it returns")
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
        let behind = waitFor(seconds: 10) {
            ((try? airlock(["status", "--root", sandbox.root.path]).stdout) ?? "")
                .range(of: "\npublish: +\(expected.count) records not yet published", options: .regularExpression) != nil
        }
        let status = try airlock(["status", "--root", sandbox.root.path])
        #expect(behind, "\(status.stdout)")
        #expect(status.stdout.contains("last error: connecting to"), "\(status.stdout)")
        try server.start()
        #expect(waitForStream(server, expected.count, seconds: 60), "the stream did not catch up after the outage")
        _ = expectStream(try StreamContents.read(server), holds: expected)
        #expect(publisher.stop() == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(seconds: 15) == 0)
        let metrics = try String(contentsOf: sandbox.root.appendingPathComponent("metrics/airlock.prom"), encoding: .utf8)
        #expect(metrics.contains("airlock_publish_lag_records 0"), "\(metrics)")
        #expect(metrics.range(of: #"airlock_publish_failures_total [1-9]"#, options: .regularExpression) != nil, "\(metrics)")
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
        #expect(try sandbox.runOnce().status == 0)
        let expected = try sandbox.publishedEvents()
        #expect(expected.count == names.count)
        var publisher = try RunningPublisher(sandbox)
        let refused = waitFor(seconds: 20) {
            ((try? airlock(["status", "--root", sandbox.root.path]).stdout) ?? "").contains("Authorization Violation")
        }
        #expect(refused, "\((try? airlock(["status", "--root", sandbox.root.path]).stdout) ?? "")")
        #expect(publisher.stop() == 0)
        try "airlock:right horse battery\n".write(to: passwords, atomically: true, encoding: .utf8)
        publisher = try RunningPublisher(sandbox)
        let client = ["--tls-ca", file("ca.pem"), "--tls-cert", file("client.pem"), "--tls-key", file("client.key"),
                      "--user-password-file", passwords.path]
        let tlsServer = "tls://127.0.0.1:\(server.port)"
        #expect(waitFor(seconds: 30) { usleep(200_000); return StreamContents.count(server, url: tlsServer, extra: client) >= expected.count })
        _ = expectStream(try StreamContents.read(server, url: tlsServer, extra: client), holds: expected)
        #expect(publisher.stop() == 0)
        // Without the client certificate the server refuses the reader too.
        #expect(StreamContents.count(server, url: tlsServer, extra: ["--tls-ca", file("ca.pem"), "--user-password-file", passwords.path]) == -1)
    }
}
