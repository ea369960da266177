import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

/// The typed calls AirlockSystem gives the core in place of Glibc: each contract
/// checked on the files it leaves, in a sandbox of its own.
@Suite("System layer: atomic replacement, flock, typed opens and path queries")
struct SystemDoorTests {
    /// A fresh directory beneath a sandbox, opened, and the sandbox that removes it.
    private func directory() throws -> (Sandbox, FileDescriptor) {
        let sandbox = try Sandbox()
        return (sandbox, try FileDescriptor.openDirectory(path: sandbox.base.path))
    }

    private func contents(_ sandbox: Sandbox, _ name: String) throws -> String {
        String(decoding: try Data(contentsOf: sandbox.base.appendingPathComponent(name)), as: UTF8.self)
    }

    private func mode(_ sandbox: Sandbox, _ name: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: sandbox.base.appendingPathComponent(name).path)[.posixPermissions] as! NSNumber).intValue
    }

    @Test("replaceAtomically writes the new bytes under the name, replacing the old file and any temporary a stop left")
    func replacesAndCleansUp() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        try Data("old".utf8).write(to: sandbox.base.appendingPathComponent("report.json"))
        try Data("torn".utf8).write(to: sandbox.base.appendingPathComponent("report.json.tmp"))
        try directory.replaceAtomically(Array("report.json".utf8), with: Array("new\n".utf8),
                                        temporary: Array("report.json.tmp".utf8), .init(mode: 0o600))
        try expectEqual(contents(sandbox, "report.json"), "new\n")
        try expectEqual(mode(sandbox, "report.json"), 0o600)
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.base.path).filter { $0 != "logs" }
        expectEqual(names, ["report.json"])
    }

    @Test("replaceAtomically keeps the mode asked for against the umask only when told to")
    func modeAndUmask() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        let previous = umask(0o077)
        defer { umask(previous) }
        try directory.replaceAtomically(Array("narrowed".utf8), with: [0x31], temporary: Array(".narrowed.tmp".utf8), .init(mode: 0o644))
        try directory.replaceAtomically(Array("exact".utf8), with: [0x31], temporary: Array(".exact.tmp".utf8),
                                        .init(mode: 0o644, ignoresUmask: true, syncsDirectory: false))
        try expectEqual(mode(sandbox, "narrowed"), 0o600)
        try expectEqual(mode(sandbox, "exact"), 0o644)
    }

    @Test("replaceAtomically never writes through a link planted at the temporary name")
    func temporaryLinkIsRemovedNotFollowed() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        let victim = sandbox.base.appendingPathComponent("victim")
        try Data("keep".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(atPath: sandbox.base.appendingPathComponent("out.tmp").path, withDestinationPath: victim.path)
        try directory.replaceAtomically(Array("out".utf8), with: Array("new".utf8), temporary: Array("out.tmp".utf8), .init(mode: 0o600))
        try expectEqual(contents(sandbox, "victim"), "keep")
        try expectEqual(contents(sandbox, "out"), "new")
    }

    @Test("an exclusive flock excludes a second open of the file, shared or exclusive, until it is let go")
    func flockExcludes() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        let first = try directory.open(Array("lock".utf8), [.readWrite, .create, .noFollow], mode: 0o600)
        defer { first.close() }
        let second = try directory.open(Array("lock".utf8), [.readOnly, .noFollow])
        defer { second.close() }
        try expect(first.tryLockExclusive())
        try expect(!second.tryLockExclusive())
        try expect(!second.tryLockShared())
        first.unlock()
        try expect(second.tryLockShared())
        try expect(!first.tryLockExclusive())
    }

    @Test("noFollow refuses a link at the last component with ELOOP; exclusive refuses what exists with EEXIST")
    func openOptions() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        try FileManager.default.createSymbolicLink(atPath: sandbox.base.appendingPathComponent("link").path, withDestinationPath: "/etc/passwd")
        do {
            _ = try directory.open(Array("link".utf8), [.readOnly, .noFollow])
            Issue.record("O_NOFOLLOW opened a link")
        } catch {
            expectEqual(error.errno, .tooManyLinks)
        }
        do {
            _ = try directory.open(Array("link".utf8), [.writeOnly, .create, .exclusive, .noFollow], mode: 0o600)
            Issue.record("O_EXCL opened an existing name")
        } catch {
            expectEqual(error.errno, .exists)
        }
    }

    @Test("pwrite and ftruncate replace a file's contents in place")
    func truncateAndWriteAt() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        try Data("a much longer earlier line\n".utf8).write(to: sandbox.base.appendingPathComponent("pid"))
        try directory.open(Array("pid".utf8), [.readWrite, .noFollow]).closeAfter { (fd) throws(SystemError) in
            try fd.truncate(to: 0)
            try fd.write(Array("42\n".utf8), at: 0)
        }
        try expectEqual(contents(sandbox, "pid"), "42\n")
    }

    @Test("makeDirectories makes every missing directory of a path and keeps what exists")
    func makeDirectories() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        let path = sandbox.base.path + "/a/b//c/"
        try FileDescriptor.makeDirectories(path: path)
        try FileDescriptor.makeDirectories(path: path)
        let status = try FileStatus(path: sandbox.base.path + "/a/b/c")
        expectEqual(status.kind, .directory)
        try Data().write(to: sandbox.base.appendingPathComponent("file"))
        do {
            try FileDescriptor.makeDirectories(path: sandbox.base.path + "/file/below")
            Issue.record("made a directory beneath a file")
        } catch {
            expectEqual(error.errno, .notDirectory)
        }
    }

    @Test("stat of a path follows links and reports the owner and group")
    func pathStatus() throws {
        let (sandbox, directory) = try directory()
        defer { withExtendedLifetime(sandbox) { directory.close() } }
        try FileManager.default.createSymbolicLink(atPath: sandbox.base.appendingPathComponent("to-base").path, withDestinationPath: sandbox.base.path)
        let status = try FileStatus(path: sandbox.base.appendingPathComponent("to-base").path)
        expectEqual(status.kind, .directory)
        expectEqual(status.owner, UInt32(geteuid()))
        expectEqual(status.group, UInt32(getegid()))
        #expect(throws: SystemError.self) { _ = try FileStatus(path: sandbox.base.appendingPathComponent("missing").path) }
    }

    @Test("the wall clock agrees with Foundation's, to the second, in seconds and in UTC fields")
    func wallClock() {
        let before = Int64(Date().timeIntervalSince1970)
        let seconds = WallClock.seconds()
        let parts = WallClock.utc()
        let after = Int64(Date().timeIntervalSince1970)
        expect(seconds >= before && seconds <= after)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = calendar.date(from: DateComponents(year: parts.year, month: parts.month, day: parts.day,
                                                      hour: parts.hour, minute: parts.minute, second: parts.second))!
        let stamp = Int64(date.timeIntervalSince1970)
        expect(stamp >= before && stamp <= after)
    }

    @Test("the journal's line search finds each line holding the needle, also past a NUL")
    func lineSearch() {
        let text = "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"a\",\"x\":1}\n\u{0}\u{0}\n{\"id\":\"a\"}\n"
        let buffer = Array(text.utf8) + [0]
        let lines = LineSearch.lines(in: buffer, containing: "\"id\":\"a\"").map { String(decoding: $0, as: UTF8.self) }
        expectEqual(lines, ["{\"id\":\"a\"}", "{\"id\":\"a\",\"x\":1}", "{\"id\":\"a\"}"])
        expect(LineSearch.lines(in: Array("no match\n".utf8) + [0], containing: "zzz").isEmpty)
    }

    @Test("the user and group databases answer for root, and nothing for a name no group has")
    func accounts() {
        expectEqual(Accounts.user(0)?.name, "root")
        expectEqual(Accounts.user(0)?.group, 0)
        expectEqual(Accounts.group(named: "root"), 0)
        expectEqual(Accounts.group(named: "airlock-no-such-group-\(getpid())"), nil)
        expectEqual(Accounts.effectiveUserID, UInt32(geteuid()))
    }
}
