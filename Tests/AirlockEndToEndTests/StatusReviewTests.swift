import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("status for an analyst: the quarantine's size, drops claimed too long, no false 'stale'")
struct StatusReviewTests {
    @Test("after a clean run --once, status says who ran last and never calls the pid file stale")
    func afterOnce() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        try expectEqual(sandbox.runOnce().status, 0)
        let status = try airlock(["status", "--root", sandbox.root.path])
        expectEqual(status.status, 0, "\(status.stderr)")
        expect(!status.stdout.contains("stale"), "\(status.stdout)")
        expect(status.stdout.contains("not running (last: run --once, pid "), "\(status.stdout)")
        expect(status.stdout.contains("quarantine:    1 entries, "), "\(status.stdout)")
        let json = try #require(try airlock(["status", "--json", "--root", sandbox.root.path]).document(StatusDocument.self))
        let quarantine = json.quarantine
        expectEqual(quarantine.entries, 1)
        let report = try #require(try sandbox.onlyQuarantined())
        let held = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.appendingPathComponent(report.id).path)
            .map { try FileManager.default.attributesOfItem(atPath: sandbox.quarantine.appendingPathComponent(report.id).appendingPathComponent($0).path)[.size] as! Int }
        expectEqual(quarantine.bytes, Int64(held.reduce(0, +)))
    }

    @Test("a drop claimed for longer than a decoder may run is named as stuck, text and JSON")
    func longClaim() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise(decoder: ["timeout_seconds": 60])
        let id = "20261129T000000Z-0badc0de"
        let claim = sandbox.claimed.appendingPathComponent(id)
        try FileManager.default.createDirectory(at: claim, withIntermediateDirectories: false)
        try Data("held.zip".utf8).write(to: claim.appendingPathComponent("name"))
        try Samples.validZip.write(to: claim.appendingPathComponent("drop"))
        var times = [timespec(tv_sec: time(nil) - 3600, tv_nsec: 0), timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)]
        expectEqual(utimensat(AT_FDCWD, claim.path, &times, 0), 0)
        let fresh = sandbox.claimed.appendingPathComponent("20261129T000001Z-0badc0df")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: false)
        try Data("new.zip".utf8).write(to: fresh.appendingPathComponent("name"))
        let status = try airlock(["status", "--root", sandbox.root.path])
        expect(status.stdout.contains("stuck:         held.zip: claimed 3"), "\(status.stdout)")
        expect(status.stdout.contains("[\(id)]"))
        expect(!status.stdout.contains("new.zip"), "a fresh claim is not stuck")
        let json = try #require(try airlock(["status", "--json", "--root", sandbox.root.path]).document(StatusDocument.self))
        let claims = json.longClaims
        expectEqual(claims.count, 1)
        expectEqual(claims.first?.drop, "held.zip")
        expectEqual(claims.first?.id, id)
        expect((claims.first?.ageSeconds ?? 0) >= 3600)
    }
}
