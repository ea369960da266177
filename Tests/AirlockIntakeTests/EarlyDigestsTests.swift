@testable import AirlockIntake
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The manifest's head start: a large file announced by the decoder is hashed
/// while the decoder runs, and that hash is used only for the same inode, and
/// only while this process's read lease on it still stands.
@Suite("Early digests: a file hashed while the decoder runs counts only while its lease stands", .serialized)
struct EarlyDigestsTests {
    /// A staging directory beside a directory it must never reach; removed afterwards.
    final class Staging {
        let scratch: Scratch
        let path: String
        let descriptor: FileDescriptor
        var base: String { scratch.path }

        init() throws {
            // The kernel tells a lease breaker's SIGIO to its holder: here, this process.
            Signal.io.ignore()
            scratch = try Scratch("early")
            path = scratch.path + "/staging"
            try FileManager.default.createDirectory(atPath: path + "/deep/er", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: scratch.path + "/outside", withIntermediateDirectories: true)
            descriptor = try FileDescriptor.openDirectory(path: path)
        }

        deinit { descriptor.close() }

        /// Writes `size` bytes made from `seed` at `name` beneath `directory` (staging by default).
        @discardableResult
        func write(_ name: String, size: Int = 3 << 20, seed: UInt8 = 7, in directory: String? = nil) throws -> Data {
            // Byte i is i * 31 + seed, modulo 256: one period of 256 bytes, repeated
            // (a closure per byte cost seconds of a debug build's time per suite).
            let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
            var data = Data(capacity: size)
            while data.count < size { data.append(contentsOf: period.prefix(size - data.count)) }
            // Written by a child (cat), never through a descriptor of this process: a
            // process another suite starts at the same moment would inherit that
            // descriptor until its exec, even with O_CLOEXEC, and while anyone holds
            // the file open for writing the kernel grants no lease.
            _ = try EarlyDigestsTests.piped(data, to: "/bin/sh", ["-c", "exec cat > \"$0\"", (directory ?? path) + "/" + name])
            return data
        }

        /// open(2) of `name` for writing, without waiting out a lease: the descriptor
        /// (closed at once) or -1, and the errno.
        func openForWriting(_ name: String) -> (fd: Int32, errno: Int32) {
            let fd = open(path + "/" + name, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            let error = errno
            if fd >= 0 { close(fd) }
            return (fd, error)
        }

        /// What the manifest would find at `name`: the early hash for the file open there.
        func early(_ digests: EarlyDigests, _ name: String) throws -> String? {
            try descriptor.open(Array(name.utf8), [.readOnly, .noFollow]).closeAfter { try digests.sha256(for: $0.status()) }
        }
    }

    /// What `executable` prints given `data` on its standard input; it must exit 0.
    static func piped(_ data: Data, to executable: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(data)
        try input.fileHandleForWriting.close()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Scratch.Failure(operation: "\(executable) \(arguments.joined(separator: " "))", code: EIO)
        }
        return printed
    }

    static func hex(_ data: Data) throws -> String {
        String(String(decoding: try piped(data, to: "/usr/bin/sha256sum", []), as: UTF8.self).prefix(64))
    }

    /// Announces `names` as a decoder would, waits for them to be handled, then
    /// ends the decoder's run.
    static func announce(_ digests: EarlyDigests, _ names: String...) {
        for name in names { digests.written(Array(name.utf8)) }
        digests.waitUntilIdle()
        digests.finish()
    }

    /// Runs `body` on staging holding a 3 MiB `big.bin` and on digests that have
    /// taken its notice once `prepare` has run; the digests are closed afterwards.
    static func withBigFileAnnounced(prepare: (Staging) throws -> Void = { _ in },
                                     _ body: (Staging, EarlyDigests) throws -> Void) throws {
        let staging = try Staging()
        try staging.write("big.bin")
        try prepare(staging)
        let digests = EarlyDigests(staging: staging.descriptor, policy: Policy())
        defer { digests.close() }
        announce(digests, "big.bin")
        try body(staging, digests)
    }

    @Test("the decoder's exit does not wait for the file being hashed: its lookup does, and gets that hash")
    func lookupWaitsForTheFileBeingHashed() throws {
        let staging = try Staging()
        let data = try staging.write("big.bin", size: 20 << 20)
        let digests = EarlyDigests(staging: staging.descriptor, policy: Policy())
        defer { digests.close() }
        digests.written(Array("big.bin".utf8))
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while !digests.isHashing && monotonicNanoseconds() < deadline { usleep(100) }
        try #require(digests.isHashing, "the notice's hash never started")
        digests.finish()
        // 20 MiB take tens of milliseconds to hash: the lookup comes while it runs.
        try expectEqual(staging.early(digests, "big.bin"), Self.hex(data))
    }

    @Test("an announced file, nested or not, is hashed once and its hash is what sha256sum says")
    func hashedWhileLeaseStands() throws {
        let staging = try Staging()
        let top = try staging.write("big.bin")
        let nested = try staging.write("deep/er/big.bin", seed: 9)
        let digests = EarlyDigests(staging: staging.descriptor, policy: Policy())
        defer { digests.close() }
        Self.announce(digests, "big.bin", "deep/er/big.bin")
        try expectEqual(staging.early(digests, "big.bin"), Self.hex(top))
        try expectEqual(staging.early(digests, "deep/er/big.bin"), Self.hex(nested))
    }

    @Test("a writer that opens the file after the lease was taken breaks it: the early hash no longer counts")
    func writerBreaksLease() throws {
        try Self.withBigFileAnnounced { (staging, digests) throws in
            try expect(staging.early(digests, "big.bin") != nil)
            // Non-blocking, so this test does not wait out the lease-break time: the
            // open is refused, and the break has begun all the same.
            let writer = staging.openForWriting("big.bin")
            expect(writer.fd == -1 && writer.errno == EWOULDBLOCK, "the lease did not hold off a writer: \(writer)")
            try expectEqual(staging.early(digests, "big.bin"), nil)
        }
    }

    @Test("a file someone holds open for writing gets no lease and no early hash")
    func openWriterRefusesLease() throws {
        var writer: Int32 = -1
        defer { if writer >= 0 { close(writer) } }
        try Self.withBigFileAnnounced(prepare: { staging in
            writer = open(staging.path + "/big.bin", O_WRONLY | O_CLOEXEC)
            expect(writer >= 0)
        }) { (staging, digests) throws in
            try expectEqual(staging.early(digests, "big.bin"), nil)
        }
    }

    @Test("a file replaced at the announced name after hashing is another inode: its hash is not the early one")
    func replacedFile() throws {
        try Self.withBigFileAnnounced { (staging, digests) throws in
            try staging.write("other.bin", seed: 99)
            expectEqual(rename(staging.path + "/other.bin", staging.path + "/big.bin"), 0)
            try expectEqual(staging.early(digests, "big.bin"), nil)
        }
    }

    @Test("names that lead out of staging, through a link, or to a FIFO are not followed, and nothing waits on them")
    func hostileNames() throws {
        let staging = try Staging()
        try staging.write("secret.bin", in: staging.base + "/outside")
        expectEqual(symlink(staging.base + "/outside", staging.path + "/link"), 0)
        expectEqual(symlink(staging.base + "/outside/secret.bin", staging.path + "/direct"), 0)
        expectEqual(mkfifo(staging.path + "/fifo", 0o600), 0)
        let digests = EarlyDigests(staging: staging.descriptor, policy: Policy())
        defer { digests.close() }
        let started = Date()
        Self.announce(digests, "link/secret.bin", "direct", "../outside/secret.bin", "fifo", "deep/../../outside/secret.bin", "", "/etc/passwd")
        expect(Date().timeIntervalSince(started) < 5, "a FIFO held the hashing thread")
        let outside = try FileDescriptor.openDirectory(path: staging.base + "/outside")
        defer { outside.close() }
        let reached = try outside.open(Array("secret.bin".utf8), [.readOnly]).closeAfter { try digests.sha256(for: $0.status()) }
        expectEqual(reached, nil, "a file outside staging was hashed")
    }

    @Test("only the hashed files stay open, none of the directories walked to them nor what failed on the way; close() closes them")
    func descriptorsHeld() throws {
        let staging = try Staging()
        let path = URL(fileURLWithPath: staging.path).resolvingSymlinksInPath().path
        try staging.write("deep/er/big.bin")
        try staging.write("deep/small.bin", size: 10)
        expectEqual(mkfifo(staging.path + "/deep/fifo", 0o600), 0)
        let digests = EarlyDigests(staging: staging.descriptor, policy: Policy())
        Self.announce(digests, "deep/er/big.bin", "deep/missing/x.bin", "deep/er/none.bin", "deep/fifo", "deep/small.bin/x")
        expectEqual(descriptorsOpen(beneath: path), [path, path + "/deep/er/big.bin"])
        digests.close()
        expectEqual(descriptorsOpen(beneath: path), [path])
    }

    @Test("closing lets every lease go: a writer may open the file")
    func closeReleases() throws {
        try Self.withBigFileAnnounced { (staging, digests) throws in
            try expect(staging.early(digests, "big.bin") != nil)
            digests.close()
            // A process another suite starts in this instant shares the leased file
            // until its exec, so the lease may outlive close() by that long; one not
            // let go would hold off writers for the kernel's lease-break time (45 s by default).
            var writer = staging.openForWriting("big.bin")
            let deadline = Date().addingTimeInterval(2)
            while writer.fd < 0 && writer.errno == EWOULDBLOCK && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
                writer = staging.openForWriting("big.bin")
            }
            expect(writer.fd >= 0, "\(writer)")
        }
    }

    @Test("no more is hashed early than the policy lets a drop write, and nothing after the decoder has exited")
    func bounded() throws {
        let staging = try Staging()
        try staging.write("a.bin", size: 2 << 20)
        try staging.write("b.bin", size: 2 << 20, seed: 3)
        try staging.write("late.bin", size: 2 << 20, seed: 5)
        var policy = Policy()
        policy.maxTotalBytes = 3 << 20
        let digests = EarlyDigests(staging: staging.descriptor, policy: policy)
        defer { digests.close() }
        Self.announce(digests, "a.bin", "b.bin")
        digests.written(Array("late.bin".utf8))
        let hashed = try ["a.bin", "b.bin"].filter { try staging.early(digests, $0) != nil }
        expectEqual(hashed.count, 1, "\(hashed)")
        try expectEqual(staging.early(digests, "late.bin"), nil)
    }
}
