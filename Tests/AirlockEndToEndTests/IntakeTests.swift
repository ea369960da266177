import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A small valid ZIP from the corpus, and its expected outbox listing.
enum Samples {
    static var validZip: Data { try! Data(contentsOf: fixture("zip-deflate-valid.zip")) }
    static var traversalZip: Data { try! Data(contentsOf: fixture("zip-traversal.zip")) }
    static func fixture(_ name: String) -> URL {
        Binary.repository.appendingPathComponent("fixtures/archives").appendingPathComponent(name)
    }
}

@Suite("Intake: the inbox, the decoder child, naming and recovery")
struct IntakeTests {
    @Test("inbox entries that are not regular files are quarantined as they are, never read")
    func notRegularFiles() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let outsideTarget = sandbox.base.appendingPathComponent("sentinel-outside.txt")
        try FileManager.default.createSymbolicLink(atPath: sandbox.inbox.appendingPathComponent("link.zip").path,
                                                   withDestinationPath: outsideTarget.path)
        expectEqual(mkfifo(sandbox.inbox.appendingPathComponent("pipe.zip").path, 0o644), 0)
        try FileManager.default.createDirectory(at: sandbox.inbox.appendingPathComponent("folder.zip"), withIntermediateDirectories: false)
        try sandbox.drop(Samples.validZip, as: "linked.zip")
        expectEqual(link(sandbox.inbox.appendingPathComponent("linked.zip").path, sandbox.root.appendingPathComponent("partner").path), 0)

        let result = try sandbox.runOnce()
        expectEqual(result.status, 0, "\(result.stderr)")
        let events = result.events
        expectEqual(events.count, 4)
        for event in events {
            expectEqual(event.kind, .rejected)
            expectEqual(event.reason, "not-regular-file", "\(event)")
        }
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path)
        expectEqual(quarantined.count, 4)
        var kinds: [mode_t] = []
        for id in quarantined {
            let directory = sandbox.quarantine.appendingPathComponent(id)
            let report = try Report.read(directory.appendingPathComponent("report.json"))
            expectEqual(report.reason, "not-regular-file")
            var st = stat()
            expectEqual(lstat(directory.appendingPathComponent("drop").path, &st), 0)
            kinds.append(st.st_mode & S_IFMT)
            if st.st_mode & S_IFMT == S_IFLNK {
                let target = try FileManager.default.destinationOfSymbolicLink(atPath: directory.appendingPathComponent("drop").path)
                expectEqual(target, outsideTarget.path, "the symlink itself was moved")
                expectEqual(report.sha256, nil, "a link is never read, so it has no hash")
            }
        }
        expectEqual(Set(kinds), [S_IFLNK, S_IFIFO, S_IFDIR, S_IFREG])
    }

    @Test("temporary names are left alone until renamed", arguments: [".hidden.zip", "upload.zip.part", "upload.tmp", "upload.zip~"])
    func temporaryNames(_ name: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: name)
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0)
        expect(result.events.isEmpty)
        try expectEqual(Data(contentsOf: sandbox.inbox.appendingPathComponent(name)), Samples.validZip)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
        try sandbox.expectInvariants()
    }

    @Test("a decoder that crashes ends as decoder-failed with the drop quarantined")
    func decoderCrash() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "crash.zip")
        let result = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": "abort"])
        expectEqual(result.status, 0, "\(result.stderr)")
        expectEqual(result.events.first?.reason, "decoder-failed")
        expectEqual((result.events.first?.detail)?.contains("SIGABRT"), true)
        try sandbox.expectInvariants()
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), Samples.validZip)
        expectEqual(quarantined.report.reason, "decoder-failed")
    }

    @Test("a decoder past its wall-clock limit is killed and the drop quarantined")
    func decoderTimeout() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(decoder: ["timeout_seconds": 1])
        try sandbox.drop(Samples.validZip, as: "slow.zip")
        let started = Date()
        let result = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": "hang"])
        expect(Date().timeIntervalSince(started) < 30)
        expectEqual(result.events.first?.reason, "decoder-failed")
        expectEqual((result.events.first?.detail)?.contains("limit"), true)
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), Samples.validZip)
    }

    @Test("a drop written to while it is decoded is changed-during-ingest")
    func changedDuringIngest() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "growing.zip")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binary.airlock)
        process.arguments = ["run", "--once", "--root", sandbox.root.path]
        // The decoder sleeps two seconds after confining itself: time to write.
        process.environment = ["AIRLOCK_TEST_DECODER_FAULT": "delay"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Whenever the append lands after the claim (before the supervisor opens the
        // drop, or while the delayed decoder holds it), the drop has changed.
        let appended = waitFor(seconds: 30) {
            for id in (try? FileManager.default.contentsOfDirectory(atPath: sandbox.claimed.path)) ?? [] {
                let drop = sandbox.claimed.appendingPathComponent(id).appendingPathComponent("drop")
                guard let handle = try? FileHandle(forWritingTo: drop) else { continue }
                defer { try? handle.close() }
                guard (try? handle.seekToEnd()) != nil,
                      (try? handle.write(contentsOf: Data("appended by a late writer".utf8))) != nil else { return false }
                return true
            }
            return false
        }
        expect(appended, "the claimed drop never appeared")
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let event = try #require(Outcome(status: 0, stdout: String(decoding: stdout, as: UTF8.self), stderr: "").events.first)
        expectEqual(event.reason, "changed-during-ingest", "\(event)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [])
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), Samples.validZip + Data("appended by a late writer".utf8))
    }

    @Test("a second drop of one name gets name-2; existing outbox entries are never touched")
    func outboxNames() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        // An operator's own entry under the first candidate name.
        let foreign = sandbox.outbox.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: foreign, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: foreign.appendingPathComponent("keep.txt"))
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let first = try sandbox.runOnce()
        expectEqual(first.events.first?.output, "outbox/photos-2")
        let before = try sandbox.listing(sandbox.outbox.appendingPathComponent("photos-2"))
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let second = try sandbox.runOnce()
        expectEqual(second.events.first?.output, "outbox/photos-3")
        try expectEqual(sandbox.listing(foreign), ["keep.txt"])
        try expectEqual(Data(contentsOf: foreign.appendingPathComponent("keep.txt")), Data("mine".utf8))
        try expectEqual(sandbox.listing(sandbox.outbox.appendingPathComponent("photos-2")), before)
        try sandbox.expectInvariants()
    }

    @Test("a drop name that fails the name policy gives the outbox entry the drop's id")
    func hostileDropName() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "bad\nname:.zip")
        let result = try sandbox.runOnce()
        let event = try #require(result.events.first)
        expectEqual(event.drop, "bad\\x0aname:.zip")
        let id = try #require(event.id)
        expectEqual(event.output, "outbox/" + id)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), [id])
        try sandbox.expectInvariants()
    }

    @Test("a drop over the size limit is drop-too-large without decoding")
    func dropTooLarge() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(policy: ["max_drop_bytes": 100])
        try sandbox.drop(Samples.validZip, as: "big.zip")
        let result = try sandbox.runOnce()
        expectEqual(result.events.first?.reason, "drop-too-large")
        try sandbox.expectInvariants()
        let quarantined = try #require(try sandbox.onlyQuarantined())
        try expectEqual(Data(contentsOf: quarantined.drop), Samples.validZip)
    }

    @Test("many drops at once: each ends in exactly one place")
    func manyDrops() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        for index in 0..<12 {
            try sandbox.drop(index % 3 == 0 ? Samples.traversalZip : Samples.validZip, as: "drop\(index).zip")
        }
        let result = try sandbox.runOnce()
        let events = result.events
        expectEqual(events.count, 12)
        expectEqual(Set(events.compactMap { $0.drop }).count, 12)
        expectEqual(events.filter { $0.kind == .rejected }.count, 4)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path).count, 8)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).count, 4)
        try sandbox.expectInvariants()
        let again = try sandbox.runOnce()
        expect(again.events.isEmpty, "nothing is processed twice")
    }

    @Test("an empty inbox is a quiet success")
    func emptyInbox() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let result = try sandbox.runOnce()
        expectEqual(result.status, 0)
        expect(result.stdout.isEmpty)
        try sandbox.expectInvariants()
    }
}

@Suite("Crash recovery: staging wiped, claims finished or processed again exactly once")
struct RecoveryTests {
    func makeClaim(_ sandbox: Sandbox, id: String, name: String, data: Data) throws -> URL {
        let claim = sandbox.claimed.appendingPathComponent(id)
        try FileManager.default.createDirectory(at: claim, withIntermediateDirectories: false)
        try Data(name.utf8).write(to: claim.appendingPathComponent("name"))
        try data.write(to: claim.appendingPathComponent("drop"))
        return claim
    }

    @Test("leftover staging is deleted and a claimed drop is processed once")
    func claimedDropProcessed() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let leftover = sandbox.staging.appendingPathComponent("20260101T000000Z-deadbeef")
        try FileManager.default.createDirectory(at: leftover.appendingPathComponent("half/done"), withIntermediateDirectories: true)
        try Data("partial".utf8).write(to: leftover.appendingPathComponent("half/done/file"))
        try FileManager.default.createSymbolicLink(atPath: leftover.appendingPathComponent("escape").path,
                                                   withDestinationPath: sandbox.base.path)
        _ = try makeClaim(sandbox, id: "20260101T000000Z-deadbeef", name: "photos.zip", data: Samples.validZip)
        let result = try sandbox.runOnce()
        expectEqual(result.events.count, 1)
        expectEqual(result.events.first?.kind, .accepted)
        expectEqual(result.events.first?.id, "20260101T000000Z-deadbeef")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"])
        try sandbox.expectInvariants()
        try expect(sandbox.runOnce().events.isEmpty)
    }

    @Test("a claim whose commit already happened is removed, not committed twice")
    func committedClaim() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let output = sandbox.outbox.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: false)
        var st = stat()
        expectEqual(stat(output.path, &st), 0)
        let claim = try makeClaim(sandbox, id: "20260101T000000Z-0000beef", name: "photos.zip", data: Samples.validZip)
        try Data("\(st.st_dev) \(st.st_ino)\n".utf8).write(to: claim.appendingPathComponent("commit"))
        let result = try sandbox.runOnce()
        expect(result.events.isEmpty, "\(result.stdout)")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"])
        try sandbox.expectInvariants()
        // The stop came before the verdict's journal record: recovery writes it.
        let history = try airlock(["history", "--json", "--root", sandbox.root.path]).events
        expectEqual(history.filter { $0.kind == .accepted && $0.id == "20260101T000000Z-0000beef" }.count, 1)
    }

    @Test("a claim whose commit did not happen is processed again")
    func uncommittedClaim() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let claim = try makeClaim(sandbox, id: "20260101T000000Z-1111beef", name: "photos.zip", data: Samples.validZip)
        try Data("1 999999999\n".utf8).write(to: claim.appendingPathComponent("commit"))
        let result = try sandbox.runOnce()
        expectEqual(result.events.first?.kind, .accepted)
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path), ["photos"])
        try sandbox.expectInvariants()
    }

    @Test("a claim with its report written finishes its move to quarantine")
    func halfQuarantined() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let claim = try makeClaim(sandbox, id: "20260101T000000Z-2222beef", name: "evil.zip", data: Samples.traversalZip)
        try Data(#"{"id": "20260101T000000Z-2222beef", "reason": "unsafe-path"}"#.utf8).write(to: claim.appendingPathComponent("report.json"))
        _ = try sandbox.runOnce()
        // The report stays the partial one the claim held, so it is not read as a whole Report here.
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path), ["20260101T000000Z-2222beef"])
        let entry = sandbox.quarantine.appendingPathComponent("20260101T000000Z-2222beef")
        try expectEqual(FileManager.default.contentsOfDirectory(atPath: entry.path).sorted(), ["drop", "report.json"])
        try expectEqual(Data(contentsOf: entry.appendingPathComponent("drop")), Samples.traversalZip)
        try sandbox.expectInvariants()
    }
}

@Suite("gzip members")
struct GzipMemberTests {
    @Test("a tar.gz of several gzip members is accepted whole; bytes after the last member are a rejection")
    func members() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let tar = TarBuilder.archive((0..<3).map { (name: "part-\($0).bin", size: 200_000) })
        let half = sandbox.logs.appendingPathComponent("first"), rest = sandbox.logs.appendingPathComponent("second")
        try tar[0..<250_000].write(to: half)
        try tar[250_000...].write(to: rest)
        try expectEqual(airlockShell("/bin/gzip", ["-1", half.path]), 0)
        try expectEqual(airlockShell("/bin/gzip", ["-9", rest.path]), 0)
        let joined = try Data(contentsOf: URL(fileURLWithPath: half.path + ".gz")) + Data(contentsOf: URL(fileURLWithPath: rest.path + ".gz"))
        try sandbox.drop(joined, as: "members.tar.gz")
        try sandbox.drop(joined + Data("trailing bytes that are no gzip member".utf8), as: "trailing.tar.gz")
        let result = try sandbox.runOnce()
        let byDrop = Dictionary(uniqueKeysWithValues: result.events.map { ($0.drop, $0) })
        expectEqual(byDrop["members.tar.gz"]?.kind, .accepted)
        expectEqual(byDrop["members.tar.gz"]?.files, 3)
        expectEqual(byDrop["trailing.tar.gz"]?.reason, "corrupt-archive")
        try sandbox.expectInvariants()
    }
}
