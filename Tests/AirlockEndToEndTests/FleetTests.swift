import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let terminal: Set<String> = ["accepted", "rejected"]

/// Several instances on one root (`run --instance NAME`): each drop ends once
/// across the fleet, a stopped instance's work is taken over, a frozen one that
/// wakes after its take-over commits nothing, and a single daemon's root becomes a
/// fleet's in place.
@Suite("A fleet on one root: instances, take-over, fencing, commits without NOREPLACE, upgrade", .serialized)
struct FleetTests {
    @Test("two instances share a root: every drop ends once across the fleet, each instance journals apart")
    func twoInstancesShareARoot() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["poll_seconds": 1])
        let a = try RunningDaemon(sandbox, label: "a", extra: ["--instance", "a"])
        let b = try RunningDaemon(sandbox, label: "b", extra: ["--instance", "b"])
        for index in 0..<8 { try sandbox.drop(Samples.validZip, as: "valid\(index).zip") }
        for index in 0..<4 { try sandbox.drop(Samples.traversalZip, as: "evil\(index).zip") }
        expect(waitFor(seconds: 60) { ((try? sandbox.terminalRecords().count) ?? 0) >= 12 }, "\(a.stderr)\n\(b.stderr)")
        a.signal(SIGTERM)
        b.signal(SIGTERM)
        expect(a.waitForExit(seconds: 30) == 0 && b.waitForExit(seconds: 30) == 0)
        try sandbox.expectFleetInvariants()
        let records = try sandbox.terminalRecords()
        expectEqual(records.count, 12, "\(records.map(\.record))")
        expectEqual(Set(records.map(\.record.drop)).count, 12, "a drop ended twice")
        expect(Set(records.map(\.journal)).isSubset(of: ["a", "b"]), "records outside the instances' journals")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), (0..<8).map { "valid\($0)" })
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path)
        expectEqual(quarantined.count, 4)
        for id in quarantined {
            expect(id.hasSuffix("-a") || id.hasSuffix("-b"), "quarantine ids carry the instance: \(id)")
            try expectEqual(Data(contentsOf: sandbox.quarantine.appendingPathComponent(id).appendingPathComponent("drop")), Samples.traversalZip)
        }
        let status = try airlock(["status", "--root", sandbox.root.path, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let instances = try #require(document["instances"] as? [[String: Any]])
        expectEqual(instances.compactMap { $0["name"] as? String }, ["a", "b"])
        expect(instances.allSatisfy { $0["state"] as? String == "stopped" && $0["running"] as? Bool == false })
        expect((document["totals"] as? [String: Any])?["accepted"] as? Int == 8)
        let schema = try FieldSchema()
        expect(schema.violations(document, "status --json").isEmpty, "\(schema.violations(document, "status --json"))")
        let doctor = try #require(try JSONSerialization.jsonObject(with: Data(airlock(["doctor", "--root", sandbox.root.path, "--json"]).stdout.utf8)) as? [String: Any])
        expect(schema.violations(doctor, "doctor --json").isEmpty, "\(schema.violations(doctor, "doctor --json"))")
        // The feed reads both journals; resuming after any record yields exactly the rest.
        let feed = try airlock(["events", "--root", sandbox.root.path]).events.filter { terminal.contains($0.kind.rawValue) }
        expectEqual(feed.count, 12)
        let middle = try #require(feed[5].cursor)
        let rest = try airlock(["events", "--root", sandbox.root.path, "--after", middle]).events
            .filter { terminal.contains($0.kind.rawValue) }
        expectEqual(rest.compactMap(\.id), feed[6...].compactMap(\.id))
    }

    struct Stop: CustomStringConvertible, Sendable {
        let step: String
        let hostile: Bool
        let rename: Bool
        var description: String { "\(step)\(rename ? ", plain rename(2)" : "")" }
    }

    @Test("a killed instance's claim is adopted by another and ends exactly once",
          arguments: [Stop(step: "accepted-renamed", hostile: false, rename: false), Stop(step: "accepted-renamed", hostile: false, rename: true),
                      Stop(step: "claim-half-removed", hostile: false, rename: false), Stop(step: "rejected-reported", hostile: true, rename: true),
                      Stop(step: "rejected-journalled", hostile: true, rename: false)])
    func killedInstanceTakenOver(_ stop: Stop) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let bytes = stop.hostile ? Samples.traversalZip : Samples.validZip
        try sandbox.drop(bytes, as: "photos.zip")
        let environment = stop.rename ? ["AIRLOCK_TEST_COMMIT_MODE": "rename"] : [:]
        let killed = try sandbox.runOnce(instance: "a", environment: environment.merging(["AIRLOCK_TEST_CRASH_AT": stop.step]) { $1 })
        expectEqual(killed.status, Int32(SIGKILL), "\(killed.stderr)")
        try expect(sandbox.held(sandbox.claimed).count == 1 && sandbox.held(sandbox.claimed)[0].hasPrefix("a/"))
        let taker = try sandbox.runOnce(instance: "b", environment: environment)
        expectEqual(taker.status, 0, "\(taker.stderr)")
        expect(taker.stderr.contains("take-over: instance a by b"), "\(taker.stderr)")
        try sandbox.expectFleetInvariants()
        let records = try sandbox.terminalRecords()
        expectEqual(records.count, 1, "\(records.map(\.record))")
        expectEqual(records.first?.record.kind, (stop.hostile ? .rejected : .accepted))
        if stop.hostile {
            let quarantined = try #require(try sandbox.onlyQuarantined())
            try expectEqual(Data(contentsOf: quarantined.drop), bytes)
        } else {
            try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"])
        }
        let record = try sandbox.instanceRecord("a")
        expect(record["state"] as? String == "taken-over" && record["taken_over_by"] as? String == "b" && record["generation"] as? Int == 2)
        // A second run of either changes nothing.
        try expectEqual(sandbox.runOnce(instance: "a").status, 0)
        try expectEqual(sandbox.terminalRecords().count, 1)
    }

    @Test("a commit made through another host's mount (another device number) is found by its inode and manifest: the drop ends once")
    func commitNoteFromAnotherMount() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let killed = try sandbox.runOnce(instance: "a", environment: ["AIRLOCK_TEST_CRASH_AT": "accepted-renamed"])
        expectEqual(killed.status, Int32(SIGKILL), "\(killed.stderr)")
        let held = try sandbox.held(sandbox.claimed)
        expect(held.count == 1 && held[0].hasPrefix("a/"))
        // Each ceph-fuse or NFS mount has a device number of its own: rewrite the
        // note as instance a's host would have written it.
        let note = sandbox.claimed.appendingPathComponent(held[0]).appendingPathComponent("commit")
        var fields = try String(contentsOf: note, encoding: .utf8).split(separator: " ").map(String.init)
        fields[0] = String((UInt64(fields[0]) ?? 0) + 4242)
        try fields.joined(separator: " ").write(to: note, atomically: false, encoding: .utf8)
        let taker = try sandbox.runOnce(instance: "b")
        expectEqual(taker.status, 0, "\(taker.stderr)")
        try sandbox.expectFleetInvariants()
        let records = try sandbox.terminalRecords()
        expect(records.count == 1 && records.first?.record.kind == .accepted, "\(records.map(\.record))")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"], "committed twice")
    }

    @Test("a commit note whose inode now belongs to another drop's entry is not taken for this drop's commit")
    func commitNoteInodeReused() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        try expectEqual(sandbox.runOnce(instance: "a", environment: ["AIRLOCK_TEST_CRASH_AT": "accepted-renamed"]).status, Int32(SIGKILL))
        // As if the staging directory had been removed in a take-over and its inode
        // given to another instance's commit of another drop: the entry's manifest
        // names that drop.
        let manifest = sandbox.outbox.appendingPathComponent("photos").appendingPathComponent(manifestName)
        let claimID = try #require(try sandbox.held(sandbox.claimed).first?.split(separator: "/").last.map(String.init))
        let text = try String(contentsOf: manifest, encoding: .utf8)
        try text.replacingOccurrences(of: claimID, with: "20261201T000000Z-00000000-c").write(to: manifest, atomically: false, encoding: .utf8)
        let taker = try sandbox.runOnce(instance: "b")
        expectEqual(taker.status, 0, "\(taker.stderr)")
        try sandbox.expectFleetInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), ["photos", "photos-2"])
        let records = try sandbox.terminalRecords()
        expect(records.count == 1 && records.first?.record.output == "outbox/photos-2", "\(records.map(\.record))")
    }

    @Test("an instance frozen past its take-over commits nothing when it wakes, and exits 75")
    func frozenInstanceIsFenced() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["poll_seconds": 1])
        // The decoder takes 2 s, so the instance is surely frozen with the drop claimed.
        let (holder, a) = try evictableInstance(sandbox, "a", environment: ["AIRLOCK_TEST_DECODER_FAULT": "delay"])
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        // Frozen once its `claimed` record is written (from the hash, beside the decoder):
        // then no append of its own is under way, which a take-over would wait for.
        let journal = sandbox.root.appendingPathComponent("state/journal/a.jsonl")
        expect(waitFor(seconds: 20) {
            ((try? sandbox.held(sandbox.staging)) ?? []).count == 1
                && String(decoding: (try? Data(contentsOf: journal)) ?? Data(), as: UTF8.self).contains("\"event\":\"claimed\"")
        }, "\(a.stderr)")
        a.signal(SIGSTOP)
        // kill(2) returns before the process has stopped: wait until all its threads have.
        expect(waitFor(seconds: 10) { isStopped(a.process.processIdentifier) })
        let before = (try? Data(contentsOf: journal)) ?? Data()
        holder.release()
        let taker = try sandbox.runOnce(instance: "b")
        expect(taker.status == 0 && taker.stderr.contains("take-over: instance a by b"), "\(taker.stderr)")
        a.signal(SIGCONT)
        expectEqual(a.waitForExit(seconds: 30), 75, "\(a.stderr)")
        expect(a.stderr.contains("instance a was taken over"), "\(a.stderr)")
        // Nothing it decides: no terminal record. (A `claimed` line the freeze caught
        // half-way through its append may still land: it decides nothing.)
        let after = (try? Data(contentsOf: journal)) ?? Data()
        let written = String(decoding: after.dropFirst(before.count), as: UTF8.self)
        expect(!written.contains("\"event\":\"accepted\"") && !written.contains("\"event\":\"rejected\"")
                && !written.contains("\"event\":\"deferred\""), "the fenced instance journalled an outcome: \(written)")
        try sandbox.expectFleetInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"])
        let records = try sandbox.terminalRecords()
        expect(records.count == 1 && records.first?.journal == "b", "\(records.map(\.record))")
    }

    @Test("an instance frozen after its last look at its generation, before its record's write, gets that record in before the take-over recovers: one terminal record")
    func frozenBetweenLookAndWrite() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("watch", ["poll_seconds": 1])
        // It stops itself holding its journal's lock, its fence looked at, its accepted record not written.
        let (holder, a) = try evictableInstance(sandbox, "a", environment: ["AIRLOCK_TEST_STOP_AFTER_FENCE": "1"])
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        expect(waitFor(seconds: 20) { isStopped(a.process.processIdentifier) }, "\(a.stderr)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"])
        holder.release()
        let b = try RunningDaemon(sandbox, label: "b", extra: ["--once", "--instance", "b"], watching: false)
        expect(waitFor(seconds: 20) { (try? sandbox.instanceRecord("a"))?["state"] as? String == "taken-over" })
        // Time enough for the taker to recover the claim, were it not waiting for a's append.
        expect(!waitFor(seconds: 1.5) { !b.process.isRunning }, "the take-over finished while a's append was under way: \(b.stderr)")
        a.signal(SIGCONT)
        expectEqual(a.waitForExit(seconds: 30), 75, "\(a.stderr)")
        expectEqual(b.waitForExit(seconds: 30), 0, "\(b.stderr)")
        expect(b.stderr.contains("take-over: instance a by b"), "\(b.stderr)")
        try sandbox.expectFleetInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"])
        let records = try sandbox.terminalRecords()
        expect(records.count == 1 && records.first?.journal == "a", "\(records.map { ($0.journal, $0.record) })")
    }

    @Test("where RENAME_NOREPLACE is refused, a plain rename of the never-empty staging directory commits, a taken name gets the next")
    func commitWithoutNoReplace() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let taken = sandbox.outbox.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: taken, withIntermediateDirectories: false)
        try Data("earlier\n".utf8).write(to: taken.appendingPathComponent("kept.txt"))
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        let environment = ["AIRLOCK_TEST_COMMIT_MODE": "rename"]
        let run = try sandbox.runOnce(instance: "a", environment: environment)
        expectEqual(run.status, 0, "\(run.stderr)")
        expect(run.stderr.contains("rename(2) of a never-empty directory"), "\(run.stderr)")
        try sandbox.expectFleetInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).sorted(), ["photos", "photos-2"])
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: taken.path), ["kept.txt"], "an existing entry was replaced")
        try expectEqual(sandbox.listing(sandbox.outbox.appendingPathComponent("photos-2")).isEmpty, false)
        try expectEqual(sandbox.onlyQuarantined().map { try Data(contentsOf: $0.drop) }, Samples.traversalZip)
        try expect(sandbox.instanceRecord("a")["commit_mode"] as? String == "rename")
        let doctor = try airlock(["doctor", "--root", sandbox.root.path, "--json"], environment: environment)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any])
        expect(line["commit_mode"] as? String == "rename" && line["cluster_shared_suggested"] as? Bool == true, "\(doctor.stdout)")
    }

    @Test("a single daemon's root becomes a fleet's in place: its claim ends once, old cursors still work")
    func upgradeInPlace() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "first.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        let cursor = try #require(try airlock(["events", "--root", sandbox.root.path]).events.last?.cursor)
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        try expectEqual(sandbox.runOnce(environment: ["AIRLOCK_TEST_CRASH_AT": "rejected-reported"]).status, Int32(SIGKILL))
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path).count, 1)
        let upgraded = try sandbox.runOnce(instance: "a")
        expectEqual(upgraded.status, 0, "\(upgraded.stderr)")
        expect(upgraded.stderr.contains("upgrade: 1 claims of the single daemon adopted by instance a"), "\(upgraded.stderr)")
        try sandbox.expectFleetInvariants()
        let records = try sandbox.terminalRecords()
        expectEqual(records.count, 2, "\(records.map(\.record))")
        expectEqual(records.map(\.journal), ["-", "a"])
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), Samples.traversalZip)
        // The cursor printed before the upgrade resumes after `first.zip`, across both journals.
        let after = try airlock(["events", "--root", sandbox.root.path, "--after", cursor])
        expectEqual(after.status, 0, "\(after.stderr)")
        let ended = after.events.filter { terminal.contains($0.kind.rawValue) }
        expectEqual(ended.map(\.drop), ["evil.zip"], "\(after.stdout)")
        expectEqual(ended.first?.cursor?.contains("a@"), true)
    }

    @Test("a single daemon and an instance of a fleet never run on one root together")
    func singleAndFleetExclude() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let a = try RunningDaemon(sandbox, label: "a", extra: ["--instance", "a"])
        let single = try sandbox.runOnce()
        expectEqual(single.status, 75, "\(single.stderr)")
        let twin = try sandbox.runOnce(instance: "a")
        expect(twin.status == 75 && twin.stderr.contains("runs as this instance"), "\(twin.stderr)")
        a.signal(SIGTERM)
        expectEqual(a.waitForExit(seconds: 30), 0)
        let daemon = try RunningDaemon(sandbox, label: "single")
        let instance = try sandbox.runOnce(instance: "b")
        expect(instance.status == 75 && instance.stderr.contains("a single airlock"), "\(instance.stderr)")
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 30), 0)
    }

    @Test("the publisher reads every instance's journal and resumes from its cursor across them: each outcome once in the stream")
    func publishAcrossJournals() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let server = try NatsServer(in: sandbox.logs.appendingPathComponent("nats"))
        try sandbox.configurePublish(server)
        try sandbox.configure("watch", ["settle_milliseconds": 50, "poll_seconds": 1])
        let a = try RunningDaemon(sandbox, label: "a", extra: ["--instance", "a"])
        let b = try RunningDaemon(sandbox, label: "b", extra: ["--instance", "b"])
        let publisher = try RunningPublisher(sandbox)
        let first = try sandbox.flood(30, prefix: "one")
        expect(waitFor(seconds: 90) { ((try? sandbox.terminalRecords().count) ?? 0) >= first.count })
        expect(waitFor(seconds: 60) { usleep(200_000); return StreamContents.count(server) >= first.count })
        expectEqual(publisher.stop(), 0)
        let second = try sandbox.flood(20, prefix: "two")
        expect(waitFor(seconds: 90) { ((try? sandbox.terminalRecords().count) ?? 0) >= first.count + second.count })
        let again = try RunningPublisher(sandbox, label: "publisher-again")
        expect(waitFor(seconds: 60) { usleep(200_000); return StreamContents.count(server) >= first.count + second.count })
        usleep(1_500_000)
        expectEqual(again.stop(), 0)
        a.signal(SIGTERM)
        b.signal(SIGTERM)
        expect(a.waitForExit(seconds: 30) == 0 && b.waitForExit(seconds: 30) == 0)
        let expected = Set(try sandbox.terminalRecords().compactMap { entry in
            entry.record.id.map { $0 + ":" + entry.record.kind.rawValue }
        })
        expectEqual(expected.count, 50)
        let ids = try StreamContents.read(server).messages.map(\.id)
        expectEqual(ids.count, Set(ids).count, "stored twice: \(ids.count - Set(ids).count)")
        expectEqual(Set(ids), expected, "missing: \(expected.subtracting(ids).sorted().prefix(5))")
        let progress = try String(contentsOf: sandbox.root.appendingPathComponent("state/publish-nats-test%2Ehost.json"), encoding: .utf8)
        expect(progress.contains("a@") && progress.contains("b@"), "the saved cursor names both journals: \(progress)")
    }

    @Test("on a shared root a drop written in place waits for its rename unless cluster.settled_writes; a renamed one is taken",
          arguments: [false, true])
    func sharedRootTakesRenamedDrops(_ settledWrites: Bool) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("cluster", ["shared": true, "instance": "a", "settled_writes": settledWrites])
        try sandbox.configure("watch", ["poll_seconds": 1])
        let a = try RunningDaemon(sandbox, label: "a")
        try sandbox.drop(Samples.validZip, as: "written.zip")
        let temporary = sandbox.inbox.appendingPathComponent("renamed.zip.part")
        try Samples.validZip.write(to: temporary)
        expectEqual(rename(temporary.path, sandbox.inbox.appendingPathComponent("renamed.zip").path), 0)
        expect(waitFor(seconds: 30) { FileManager.default.fileExists(atPath: sandbox.outbox.appendingPathComponent("renamed").path) })
        if settledWrites {
            expect(waitFor(seconds: 30) { FileManager.default.fileExists(atPath: sandbox.outbox.appendingPathComponent("written").path) })
        } else {
            usleep(3_500_000)  // three polls and more
            expect(FileManager.default.fileExists(atPath: sandbox.inbox.appendingPathComponent("written.zip").path), "\(a.stderr)")
            // Renamed, it is taken.
            expectEqual(rename(sandbox.inbox.appendingPathComponent("written.zip").path, sandbox.inbox.appendingPathComponent("written2.zip").path), 0)
            expect(waitFor(seconds: 30) { FileManager.default.fileExists(atPath: sandbox.outbox.appendingPathComponent("written2").path) })
        }
        a.signal(SIGTERM)
        expectEqual(a.waitForExit(seconds: 30), 0)
        try sandbox.expectFleetInvariants()
        try expectEqual(sandbox.terminalRecords().count, 2)
    }

    @Test("--instance takes only a name that can name an instance", arguments: ["", ".hidden", "a/b", "20260101T000000Z-1", String(repeating: "x", count: 65)])
    func badInstanceName(_ name: String) throws {
        let result = try airlock(["run", "--once", "--root", "/nonexistent", "--instance", name])
        expectEqual(result.status, 64, "\(result.stderr)")
    }
}
