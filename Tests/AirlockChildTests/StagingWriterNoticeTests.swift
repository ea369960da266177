import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

/// A writer handed to another thread, which alone uses it until the test has seen it finish.
private final class WriterBox: @unchecked Sendable {
    var writer: StagingWriter
    init(_ writer: StagingWriter) { self.writer = writer }
}

/// The staging writer's notices to the supervisor: how much it wrote, every
/// `WritingNotice.step` bytes, and each large file once it is closed.
@Suite("The staging writer tells the supervisor what it wrote, every 4 MiB across files, and which large files it closed")
struct StagingWriterNoticeTests {
    /// What a writer sent to its notice pipe, line by line, after writing each
    /// (name, size) file in 64 KiB chunks.
    static func notices(writing files: [(String, Int)], to fixture: StagingFixture, announcing: Bool = true) throws -> [String] {
        let pipe = try makePipe()
        var writeEnd: FileDescriptor? = pipe.write
        defer {
            pipe.read.close()
            writeEnd?.close()
        }
        var writer = try fixture.writer()
        defer { writer.close() }
        if announcing { writer.notices = pipe.write }
        let chunk = [UInt8](repeating: 0x62, count: 1 << 16)
        for (name, size) in files {
            try writer.beginFile(try entry(name), size: Int64(size))
            var left = size
            while left > 0 {
                let count = min(left, chunk.count)
                try chunk.withUnsafeBytes { try writer.write(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                left -= count
            }
            try writer.endFile()
        }
        pipe.write.close()
        writeEnd = nil
        var sent: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try pipe.read.read(into: $0) }
            if n == 0 { break }
            sent += buffer[0..<n]
        }
        return String(decoding: sent, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test("9 MiB and then 3.5 MiB: a notice at 4 MiB and at 8 MiB of the first file, one at 12 MiB across both; each file's closing")
    func everyStepAcrossFiles() throws {
        let fixture = try StagingFixture()
        let sent = try Self.notices(writing: [("big.bin", 9 << 20), ("next.bin", 7 << 19)], to: fixture)
        let step = WritingNotice.step
        expectEqual(sent, [
            #"{"writing":\#(step)}"#, #"{"writing":\#(step)}"#,
            String(decoding: WrittenFileNotice.line(for: Array("big.bin".utf8)).dropLast(), as: UTF8.self),
            #"{"writing":\#(step)}"#,
            String(decoding: WrittenFileNotice.line(for: Array("next.bin".utf8)).dropLast(), as: UTF8.self),
        ])
        try fixture.expectOutsideUntouched()
    }

    @Test("under 4 MiB in all sends no writing notice, and a writer without a notice descriptor sends nothing")
    func quietBelowAStep() throws {
        let fixture = try StagingFixture()
        let sent = try Self.notices(writing: [("a.bin", (4 << 20) - 1)], to: fixture)
        expectEqual(sent, [String(decoding: WrittenFileNotice.line(for: Array("a.bin".utf8)).dropLast(), as: UTF8.self)])
        expectEqual(try Self.notices(writing: [("b.bin", 5 << 20)], to: try StagingFixture(), announcing: false), [])
    }

    @Test("a large file is closed before its notice goes out: a reader of the notice can take a read lease while the notice is still being written")
    func closedBeforeAnnounced() throws {
        let fixture = try StagingFixture()
        let pipe = try makePipe()
        defer { pipe.read.close() }
        // One page of pipe, all but 8 bytes of it full: the notice (longer) waits in
        // write(2) until the pipe is drained, so the writer stays inside endFile.
        let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ, which Glibc's Swift module does not export
        try #require(fcntl(pipe.write.rawValue, setPipeSize, 4096) == 4096)
        let filler = [UInt8](repeating: 0x2E, count: 4096 - 8)
        try filler.withUnsafeBytes { try pipe.write.writeAll($0) }
        var writer = try fixture.writer()
        writer.notices = pipe.write
        try writer.beginFile(try entry("big.bin"), size: nil)
        let chunk = [UInt8](repeating: 0x63, count: Int(WrittenFileNotice.minimumBytes))
        try chunk.withUnsafeBytes { try writer.write($0) }
        let ended = WaitableState(false)
        let sink = WriterBox(writer)
        try SystemThread.start(stackSize: 256 << 10) {
            try? sink.writer.endFile()
            ended.withLock { $0 = true }
        }
        let staging = try FileDescriptor.openDirectory(path: fixture.staging.path)
        let file = try staging.open(forReading: Array("big.bin".utf8), [.readOnly, .noFollow])
        staging.close()
        defer { file.close() }
        // Granted only once no descriptor has the file open for writing.
        var leased = false
        for _ in 0..<500 where !leased {
            leased = (try? file.takeReadLease()) != nil
            if !leased { usleep(10_000) }
        }
        expect(leased, "the writer still had the file open while its notice waited")
        expect(!ended.withLock { $0 }, "the notice was still waiting for room in the pipe")
        file.releaseLease()
        var buffer = [UInt8](repeating: 0, count: 8192)
        var sent: [UInt8] = []
        while !sent.contains(0x0A) {
            let n = try buffer.withUnsafeMutableBytes { try pipe.read.read(into: $0) }
            sent += buffer[0..<n]
        }
        ended.withLock(when: { $0 }) { _ in }
        pipe.write.close()
        sink.writer.close()
        expect(sent.starts(with: filler))
        try fixture.expectOutsideUntouched()
    }
}
