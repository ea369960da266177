@testable import AirlockIntake
import AirlockConfiguration
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The audit's one walk: each check it made when it walked staging on its own
/// still refuses what a subverted decoder could leave (a link of either kind, a
/// FIFO, a wrong mode, a tree deeper than the policy), and what passes comes out
/// with the outbox's modes and the hash of what staging holds.
@Suite("The staging audit's one walk: every check still refuses, and what passes is readied and hashed")
struct StagingAuditWalkTests {
    /// What a test puts into staging, as a subverted decoder might.
    enum Entry {
        case file(String, String, mode: mode_t = 0o600)
        case directory(String, mode: mode_t = 0o700)
        case symlink(String, to: String)
        case fifo(String)
        case hardLink(String, to: String)
    }

    /// A staging directory built from `entries` beside a sentinel outside it; removed afterwards.
    final class Staging {
        /// Holds `base`, removed when the last reference goes.
        private let scratch: Scratch
        let base: String
        let path: String
        let descriptor: FileDescriptor

        init(_ entries: [Entry]) throws {
            scratch = try Scratch("audit")
            base = scratch.path
            path = base + "/staging"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try Data("outside\n".utf8).write(to: URL(fileURLWithPath: base + "/sentinel"))
            for entry in entries { try Self.make(entry, in: path) }
            descriptor = try FileDescriptor.openDirectory(path: path)
        }

        // The scratch directory goes after this, with the last reference to it.
        deinit { descriptor.close() }

        private static func make(_ entry: Entry, in path: String) throws {
            func check(_ result: Int32, _ what: String) throws {
                if result != 0 { throw CocoaError(.fileWriteUnknown, userInfo: ["what": what, "errno": errno]) }
            }
            switch entry {
            case .file(let name, let text, let mode):
                try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name))
                try check(chmod(path + "/" + name, mode), name)
            case .directory(let name, let mode):
                try check(mkdir(path + "/" + name, mode), name)
                try check(chmod(path + "/" + name, mode), name)
            case .symlink(let name, let target):
                try check(symlink(target, path + "/" + name), name)
            case .fifo(let name):
                try check(mkfifo(path + "/" + name, 0o644), name)
            case .hardLink(let name, let target):
                try check(link(path + "/" + target, path + "/" + name), name)
            }
        }

        /// The inode change time of each of `names`: chmod and chown set it, even to the mode or group a file has.
        func changeTimes(_ names: [String]) throws -> [String: [Int]] {
            var times: [String: [Int]] = [:]
            for name in names {
                var st = stat()
                guard lstat(path + "/" + name, &st) == 0 else { throw CocoaError(.fileReadUnknown) }
                times[name] = [st.st_ctim.tv_sec, st.st_ctim.tv_nsec]
            }
            return times
        }

        func mode(_ name: String) throws -> mode_t {
            var st = stat()
            guard lstat(path + "/" + name, &st) == 0 else { throw CocoaError(.fileReadUnknown) }
            return st.st_mode & 0o7777
        }
    }

    static let outbox = OutboxModes(fileMode: 0o640, directoryMode: 0o750, group: nil)

    static func audit(_ staging: Staging, policy: Policy = Policy()) throws -> StagingAudit.Findings {
        try StagingAudit(policy: policy, fsyncEach: false, modes: outbox).audit(staging.descriptor)
    }

    /// The audit's refusal of `entries`, or nil when it passed them.
    static func refusal(_ entries: [Entry], policy: Policy = Policy()) throws -> String? {
        let staging = try Staging(entries)
        do {
            _ = try audit(staging, policy: policy)
            return nil
        } catch let failure as StagingAudit.Failure {
            try expectEqual(String(contentsOfFile: staging.base + "/sentinel", encoding: .utf8), "outside\n")
            return failure.detail
        }
    }

    @Test func aTreeThatPassesGetsTheOutboxModesAndTheHashesOfWhatStagingHolds() throws {
        let staging = try Staging([.directory("docs"), .file("docs/a.txt", "alpha\n"), .file("b.txt", "beta\n"), .directory("empty")])
        let findings = try Self.audit(staging)
        expect(findings.totals.files == 2 && findings.totals.directories == 2 && findings.totals.emptyDirectories == 1)
        expectEqual(findings.totals.bytes, 11)
        let hashes = Dictionary(uniqueKeysWithValues: findings.files.map { (String(decoding: $0.path, as: UTF8.self), $0.sha256) })
        // sha256sum of "alpha\n" and "beta\n".
        expectEqual(hashes, ["docs/a.txt": "b6a98d9ce9a2d9149288fa3df42d377c3e42737afdcdaf714e33c0a100b51060",
                           "b.txt": "f2c82decdd7181cf98945929a62598db7e6b477e11f6e0eb0ae97020eff151ad"])
        try expect(staging.mode("docs/a.txt") == 0o640 && staging.mode("b.txt") == 0o640)
        try expect(staging.mode("docs") == 0o750 && staging.mode("empty") == 0o750 && staging.mode("") == 0o750)
    }

    /// The policy a child is given when asked to create entries with the outbox's modes.
    static var stagedWithOutboxModes: Policy {
        var policy = Policy()
        policy.stagedFileMode = UInt32(outbox.fileMode)
        policy.stagedDirectoryMode = UInt32(outbox.directoryMode)
        return policy
    }

    @Test func entriesStagedWithTheOutboxModesPassWithoutAChangeOfMode() throws {
        let names = ["docs", "docs/a.txt", "b.txt"]
        let staging = try Staging([.directory("docs", mode: 0o750), .file("docs/a.txt", "alpha\n", mode: 0o640),
                                   .file("b.txt", "beta\n", mode: 0o640)])
        let before = try staging.changeTimes(names)
        // Past the filesystem clock's granularity, so that a chmod to the same mode would show.
        usleep(50_000)
        let findings = try Self.audit(staging, policy: Self.stagedWithOutboxModes)
        expect(findings.totals.files == 2 && findings.totals.directories == 1 && findings.totals.bytes == 11)
        try expectEqual(staging.changeTimes(names), before)
        try expect(staging.mode("docs/a.txt") == 0o640 && staging.mode("b.txt") == 0o640 && staging.mode("docs") == 0o750)
    }

    @Test func onlyTheStagedModesTheChildWasGivenAreAdmitted() throws {
        // Asked for the outbox's modes, a child that left entries private (or any other mode) is refused.
        let file = try #require(try Self.refusal([.file("a.txt", "x", mode: 0o600)], policy: Self.stagedWithOutboxModes))
        expect(file.contains("mode 600"), "\(file)")
        let directory = try #require(try Self.refusal([.directory("d", mode: 0o700)], policy: Self.stagedWithOutboxModes))
        expect(directory.contains("mode 700"), "\(directory)")
        let wider = try #require(try Self.refusal([.file("a.txt", "x", mode: 0o644)], policy: Self.stagedWithOutboxModes))
        expect(wider.contains("mode 644"), "\(wider)")
    }

    @Test func theFilesOfMoreDirectoriesThanTheWalkHoldsOpenAreAllReadiedInTheOrderMet() throws {
        // 40 directories of two files: more than the walk holds open at once, so it readies them in several batches.
        var entries: [Entry] = []
        for index in 0..<40 { entries += [.directory("d\(index)"), .file("d\(index)/a", "a\(index)\n"), .file("d\(index)/b", "b\(index)\n")] }
        let staging = try Staging(entries)
        let findings = try Self.audit(staging)
        expect(findings.totals.files == 80 && findings.totals.directories == 40 && findings.totals.bytes == 80 * 3 + 60)
        let paths = findings.files.map { String(decoding: $0.path, as: UTF8.self) }
        expectEqual(Set(paths), Set((0..<40).flatMap { ["d\($0)/a", "d\($0)/b"] }))
        // A directory's files side by side, as the walk met them.
        for pair in stride(from: 0, to: paths.count, by: 2) {
            expectEqual(paths[pair].dropLast(2), paths[pair + 1].dropLast(2), "\(paths)")
        }
        let hashes = Dictionary(uniqueKeysWithValues: findings.files.map { (String(decoding: $0.path, as: UTF8.self), $0.sha256) })
        // sha256sum of "a0\n" and "b39\n".
        expectEqual(hashes["d0/a"], "1067d7695f0b3d77aa079a53abc12cd5bc18cb6525d88466f96b0223ce50000e")
        expectEqual(hashes["d39/b"], "12d612132e28cebfb96cbfa8e09aeafee030e6199e15edbdc4853ab81867fdbf")
        for index in 0..<40 { try expect(staging.mode("d\(index)/a") == 0o640 && staging.mode("d\(index)/b") == 0o640) }
        let refused = try #require(try Self.refusal(entries + [.file("d39/c", "x", mode: 0o644)]))
        expect(refused.contains("\"d39/c\"") && refused.contains("mode 644"), "\(refused)")
    }

    @Test func aBatchsFailureIsTheVerdictThoughTheWalkWouldFailLater() throws {
        // Forty directories of two files, every file with a mode the child was not
        // asked for; the policy admits fewer nodes than the tree holds, so the walk
        // itself would fail at its very end, after the batches of the files met
        // before. The first batch fails when it is readied, before the walk goes
        // on: that failure is the verdict, run after run.
        var policy = Policy()
        policy.maxDepth = 2
        policy.maxEntries = 59
        expectEqual(policy.maxTreeNodes, 118)
        var entries: [Entry] = []
        for index in 0..<40 {
            entries += [.directory("d\(index)"), .file("d\(index)/a", "a", mode: 0o644), .file("d\(index)/b", "b", mode: 0o644)]
        }
        for _ in 0..<5 {
            let detail = try #require(try Self.refusal(entries, policy: policy))
            expect(detail.contains("mode 644") && !detail.contains("more than 118"), "\(detail)")
        }
        // Without the bad modes the walk's own failure is the verdict.
        let sound = (0..<40).flatMap { index -> [Entry] in [.directory("d\(index)"), .file("d\(index)/a", "a"), .file("d\(index)/b", "b")] }
        let walkFailure = try #require(try Self.refusal(sound, policy: policy))
        expect(walkFailure.contains("more than 118"), "\(walkFailure)")
    }

    @Test func aHardLinkIsRefused() throws {
        let detail = try #require(try Self.refusal([.file("a.txt", "x"), .hardLink("b.txt", to: "a.txt")]))
        expect(detail.contains("2 links"), "\(detail)")
    }

    @Test func aSymbolicLinkIsRefusedAndNotFollowed() throws {
        let detail = try #require(try Self.refusal([.symlink("out", to: "../sentinel")]))
        expect(detail.contains("\"out\" is a symlink"), "\(detail)")
        let inDirectory = try #require(try Self.refusal([.directory("d"), .symlink("d/out", to: "../../sentinel")]))
        expect(inDirectory.contains("\"d/out\" is a symlink"), "\(inDirectory)")
    }

    @Test func aFIFOIsRefusedWithoutBlocking() throws {
        let detail = try #require(try Self.refusal([.fifo("pipe")]))
        expect(detail.contains("\"pipe\" is a fifo"), "\(detail)")
    }

    @Test func aFileOrDirectoryWithAnotherModeIsRefused() throws {
        let file = try #require(try Self.refusal([.file("a.sh", "x", mode: 0o4755)]))
        expect(file.contains("mode 4755"), "\(file)")
        let directory = try #require(try Self.refusal([.directory("d", mode: 0o777)]))
        expect(directory.contains("mode 777"), "\(directory)")
    }

    @Test func aTreeDeeperThanThePolicyIsRefused() throws {
        var policy = Policy()
        policy.maxDepth = 3
        var entries: [Entry] = []
        var path = ""
        for level in 0..<4 {
            path += (path.isEmpty ? "" : "/") + "d\(level)"
            entries.append(.directory(path))
        }
        let detail = try #require(try Self.refusal(entries + [.file(path + "/f.txt", "deep")], policy: policy))
        expect(detail.contains("too-deep"), "\(detail)")
        try expectEqual(Self.refusal(Array(entries.prefix(3)), policy: policy), nil)
    }

    @Test func filesOverTheQuotasAreRefused() throws {
        var policy = Policy()
        policy.maxFileBytes = 4
        let one = try #require(try Self.refusal([.file("big", "12345")], policy: policy))
        expect(one.contains("over the 4-byte limit"), "\(one)")
        policy.maxFileBytes = 100
        policy.maxTotalBytes = 6
        let all = try #require(try Self.refusal([.file("a", "1234"), .file("b", "1234")], policy: policy))
        expect(all.contains("more than 6 bytes in all"), "\(all)")
    }
}
