@testable import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One operation as a sink receives it, data included.
private enum Step: Equatable {
    case directory(String)
    case begin(String)
    case chunk([UInt8])
    case end
}

/// What the recording sink saw, shared with the test (the sink runs on the writing thread).
private final class Log: @unchecked Sendable {
    private let state = WaitableState<(steps: [Step], written: Int, closed: Bool)>(([], 0, false))
    var steps: [Step] { state.withLock { $0.steps } }
    var written: Int { state.withLock { $0.written } }
    var closed: Bool { state.withLock { $0.closed } }
    func add(_ step: Step) {
        state.withLock { state in
            state.steps.append(step)
            if case .chunk(let bytes) = step { state.written += bytes.count }
        }
    }
    func close() { state.withLock { $0.closed = true } }
}

/// Records every operation; fails the one numbered `failing` (from 0) with ENOSPC,
/// and waits `delay` microseconds before each chunk.
private struct RecordingSink: EntrySink {
    let log: Log
    var failing: Int?
    var delay: UInt32 = 0
    private var count = 0

    init(_ log: Log, failing: Int? = nil, delay: UInt32 = 0) {
        self.log = log
        self.failing = failing
        self.delay = delay
    }

    private mutating func record(_ step: Step) throws(SystemError) {
        defer { count += 1 }
        if count == failing { throw SystemError("write", Array("failing".utf8), .noSpace) }
        log.add(step)
    }

    mutating func makeDirectory(_ path: EntryPath) throws(SystemError) { try record(.directory(String(decoding: path.raw, as: UTF8.self))) }
    mutating func beginFile(_ path: EntryPath, size: Int64?) throws(SystemError) { try record(.begin(String(decoding: path.raw, as: UTF8.self))) }
    mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError) {
        if delay > 0 { usleep(delay) }
        try record(.chunk([UInt8](chunk)))
    }
    mutating func endFile() throws(SystemError) { try record(.end) }
    mutating func close() { log.close() }
}

/// Byte j of small file `index` is (31·j + index) mod 256. Since 31·223 = 27·256 + 1,
/// that is 31·(j + 223·index) mod 256: each file's bytes are a slice of this one
/// table, copied whole (a closure per byte made building the steps, in a debug
/// build, cost more than the operations they describe).
private let smallFileBytes: [UInt8] = (0..<(8192 + 256)).map { UInt8(truncatingIfNeeded: $0 &* 31) }

/// The operations of an archive of `files` files spread over `directories`
/// directories, each of 1 to 8 KiB in one or two chunks, and one large file in
/// 64 KiB chunks: what a scan of many small files and a large one hands its sink.
private func steps(files: Int, directories: Int, largeBytes: Int = 0) -> [Step] {
    var steps: [Step] = []
    for directory in 0..<directories { steps.append(.directory("d\(directory)/")) }
    for index in 0..<files {
        steps.append(.begin("d\(index % directories)/f\(index).txt"))
        let size = 1024 + (index * 797) % 7168
        let start = (index &* 223) & 0xFF
        let bytes = Array(smallFileBytes[start..<start + size])
        if size > 4096 {
            steps.append(.chunk(Array(bytes[..<4096])))
            steps.append(.chunk(Array(bytes[4096...])))
        } else {
            steps.append(.chunk(bytes))
        }
        steps.append(.end)
    }
    if largeBytes > 0 {
        steps.append(.begin("large.bin"))
        for start in stride(from: 0, to: largeBytes, by: 64 << 10) {
            steps.append(.chunk([UInt8](repeating: UInt8(truncatingIfNeeded: start >> 16), count: min(64 << 10, largeBytes - start))))
        }
        steps.append(.end)
    }
    return steps
}

/// Hands `steps` to `sink` in order; the index of the step whose hand-over threw, and the error.
private func play<Sink: EntrySink>(_ steps: [Step], into sink: inout Sink, afterEach: (Int) -> Void = { _ in }) throws
    -> (index: Int, error: SystemError)? {
    for (index, step) in steps.enumerated() {
        do {
            switch step {
            case .directory(let name): try sink.makeDirectory(try entry(name))
            case .begin(let name): try sink.beginFile(try entry(name))
            case .chunk(let bytes): try bytes.withUnsafeBytes { try sink.write($0) }
            case .end: try sink.endFile()
            }
        } catch let error as SystemError {
            return (index, error)
        }
        afterEach(index)
    }
    return nil
}

/// Every entry beneath `root`: its relative path, and its bytes (nil for a directory) and mode.
private func tree(_ root: URL) throws -> [String: ([UInt8]?, mode_t)] {
    var found: [String: ([UInt8]?, mode_t)] = [:]
    for case let relative as String in FileManager.default.enumerator(atPath: root.path)! {
        var st = stat()
        let path = root.appendingPathComponent(relative).path
        expectEqual(lstat(path, &st), 0)
        let isDirectory = st.st_mode & S_IFMT == S_IFDIR
        found[relative] = (isDirectory ? nil : [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), st.st_mode & 0o7777)
    }
    return found
}

private func sameTree(_ a: [String: ([UInt8]?, mode_t)], _ b: [String: ([UInt8]?, mode_t)]) -> Bool {
    a.count == b.count && a.allSatisfy { key, value in b[key].map { $0.0 == value.0 && $0.1 == value.1 } ?? false }
}

@Suite("PipelinedSink: the writing thread performs exactly the serial writer's operations, in order, and stops where it would")
struct PipelinedSinkTests {
    @Test("1,000 small files in 100 directories and a 2 MiB file (four times the queue's bound): every operation reaches the inner sink, in order, bytes intact")
    func sameOperationsInOrder() throws {
        let expected = steps(files: 1000, directories: 100, largeBytes: 2 << 20)
        let log = Log()
        var sink = try #require(PipelinedSink(RecordingSink(log)))
        try expect(play(expected, into: &sink) == nil)
        sink.close()
        expectEqual(sink.failure, nil)
        expect(log.closed, "close() returns once the inner sink is closed")
        expectEqual(log.steps, expected)
    }

    @Test("staging holds the same entries, bytes and modes as the serial writer leaves, and nothing outside it changes")
    func sameStagingAsSerialWriter() throws {
        let steps = steps(files: 1000, directories: 100, largeBytes: 3 << 20)
        let serial = try StagingFixture(), pipelined = try StagingFixture()
        var writer = try serial.writer()
        try expect(play(steps, into: &writer) == nil)
        writer.close()
        var sink = try #require(PipelinedSink(try pipelined.writer()))
        try expect(play(steps, into: &sink) == nil)
        sink.close()
        expectEqual(sink.failure, nil)
        expect(sink.inner.filesWritten == 1001 && sink.inner.directoriesMade == 100)
        let expected = try tree(serial.staging)
        expectEqual(expected.count, 1101)
        expect(sameTree(expected, try tree(pipelined.staging)))
        expectEqual(pipelined.openDescriptors(), 1, "the staging root the test holds: the writing thread closed all it opened")
        try pipelined.expectOutsideUntouched()
    }

    @Test("a refused create mid-archive: the serial writer's error, and staging holds exactly what the serial writer left")
    func refusedCreateStopsWhereSerialStops() throws {
        let steps = steps(files: 400, directories: 10)
        let serial = try StagingFixture(), pipelined = try StagingFixture()
        for fixture in [serial, pipelined] {
            try FileManager.default.createDirectory(at: fixture.staging.appendingPathComponent("d3"), withIntermediateDirectories: false)
            try Data("planted\n".utf8).write(to: fixture.staging.appendingPathComponent("d3/f213.txt"))
        }
        var writer = try serial.writer()
        let serialFailure = try #require(try play(steps, into: &writer))
        writer.close()
        expectEqual(serialFailure.error.errno, .exists)

        var sink = try #require(PipelinedSink(try pipelined.writer()))
        let thrown = try play(steps, into: &sink)
        sink.close()
        expectEqual(sink.failure, serialFailure.error, "the same operation, entry and errno")
        if let thrown {
            expectEqual(thrown.error, serialFailure.error)
            expect(thrown.index >= serialFailure.index, "thrown at a later hand-over, never before the operation failed")
        }
        expect(sameTree(try tree(serial.staging), try tree(pipelined.staging)), "nothing after the failed create was performed")
        expectEqual(pipelined.openDescriptors(), 1, "the staging root the test holds")
        try pipelined.expectOutsideUntouched()
    }

    @Test("the first failure stops the thread: no operation after it is performed, and the scan hears of it within the queue's bound")
    func failureStopsTheThread() throws {
        let steps = steps(files: 6000, directories: 10)
        let log = Log()
        var sink = try #require(PipelinedSink(RecordingSink(log, failing: 5)))
        let thrown = try #require(try play(steps, into: &sink), "a hand-over throws the failure once the queue is full at the latest")
        sink.close()
        expectEqual(thrown.error, SystemError("write", Array("failing".utf8), .noSpace))
        expectEqual(sink.failure, thrown.error)
        expect(thrown.index < PipelinedSink<RecordingSink>.maxQueuedOperations + 2 * PipelinedSink<RecordingSink>.batchOperations)
        expectEqual(log.steps, Array(steps[..<5]), "operations 0 to 4 performed, 5 failed, none after")
        expect(log.closed)
    }

    @Test("a slow disk: the bytes waiting never pass the queue's bound plus one batch, however much is handed over")
    func boundedQueue() throws {
        let steps = steps(files: 0, directories: 1, largeBytes: 6 << 20)
        let log = Log()
        var sink = try #require(PipelinedSink(RecordingSink(log, delay: 300)))
        var handed = 0, mostWaiting = 0
        let thrown = try play(steps, into: &sink) { index in
            if case .chunk(let bytes) = steps[index] { handed += bytes.count }
            mostWaiting = max(mostWaiting, handed - log.written)
        }
        sink.close()
        expect(thrown == nil && sink.failure == nil)
        expectEqual(log.written, 6 << 20)
        expect(mostWaiting <= PipelinedSink<RecordingSink>.maxQueuedBytes + PipelinedSink<RecordingSink>.batchBytes + (64 << 10))
        expect(mostWaiting >= PipelinedSink<RecordingSink>.maxQueuedBytes / 2, "the slow sink did hold the scan back: \(mostWaiting)")
    }

    @Test("copies handed back are reused only for chunks near their size: large chunks between many tiny ones keep memory near the queue's bound")
    func reusedCopiesStayBounded() throws {
        // A 128 KiB chunk, then sixty one-byte files, 150 times over, into a slow
        // sink: the queue fills with tiny writes, each of which could have been given a
        // large copy handed back by the thread.
        var steps: [Step] = []
        for round in 0..<150 {
            steps += [.begin("large\(round).bin"), .chunk([UInt8](repeating: UInt8(round), count: 128 << 10)), .end]
            for index in 0..<60 { steps += [.begin("tiny\(round)-\(index)"), .chunk([UInt8(index)]), .end] }
        }
        let log = Log()
        var sink = try #require(PipelinedSink(RecordingSink(log, delay: 100)))
        var most = 0
        for step in steps {
            try expect(play([step], into: &sink) == nil)
            most = max(most, sink.heldCapacity)
        }
        sink.close()
        expect(sink.failure == nil)
        expectEqual(log.steps, steps)
        typealias Bounds = PipelinedSink<RecordingSink>
        let bound = 2 * (Bounds.maxQueuedBytes + Bounds.batchBytes) + 2 * Bounds.spareBuffers * Bounds.spareCapacity
            + Bounds.maxQueuedOperations * 64
        expect(most <= bound, "copies held \(most) bytes of capacity, over \(bound)")
    }

    @Test("nothing handed over: close() ends the thread and closes the inner sink")
    func emptyScan() throws {
        let log = Log()
        var sink = try #require(PipelinedSink(RecordingSink(log)))
        sink.close()
        sink.close()
        expect(log.closed && log.steps.isEmpty && sink.failure == nil)
    }
}
