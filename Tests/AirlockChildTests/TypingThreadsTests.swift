import AirlockChild
import AirlockTestSupport
import Foundation
import Testing

/// Debian's compiled magic database (libmagic-mgc).
private let magicDatabase = "/usr/lib/file/magic.mgc"

@Suite("Typing threads: libmagic on threads of their own gives each file the type one thread would, in scan order",
       .enabled(if: FileManager.default.fileExists(atPath: magicDatabase), "needs libmagic-mgc"))
struct TypingThreadsTests {
    static let database = magicDatabase

    /// First bytes of files of many types, in a fixed order.
    static func heads(_ count: Int) -> [[UInt8]] {
        let samples: [[UInt8]] = [
            [0x89] + Array("PNG\r\n\u{1a}\n".utf8) + [UInt8](repeating: 0, count: 64),
            Array("%PDF-1.4\n%\u{e2}\u{e3}\n1 0 obj\n<<>>\nendobj\n".utf8),
            Array("<!DOCTYPE html><html><body>hello</body></html>\n".utf8),
            [0x1f, 0x8b, 0x08, 0x00] + [UInt8](repeating: 0, count: 20),
            Array("#!/bin/sh\necho hello\n".utf8),
            Array(String(repeating: "plain words of text\n", count: 200).utf8),
            [],
            (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) },
        ]
        return (0..<count).map { samples[$0 % samples.count] }
    }

    @Test("2,000 files through two typing threads: the same types as on this thread, each under its own index")
    func sameTypesAsOneThread() throws {
        let detector = try ContentTypeDetector(database: Self.database)
        let heads = Self.heads(2000)
        let expected = heads.map { detector.type(of: $0) }
        let threads = try #require(TypingThreads([try detector.sibling(), try detector.sibling()]))
        for (index, head) in heads.enumerated() { threads.submit(index, head) }
        let typed = threads.finish()
        expectEqual(typed.count, heads.count)
        expectEqual((0..<heads.count).map { typed[$0] }, expected)
        expect(Set(expected).count >= 5, "the samples are of several types: \(Set(expected))")
    }

    @Test("heads of 64 KiB, far more than the queue holds: every file is typed, none lost to the bound")
    func boundedQueueLosesNothing() throws {
        let detector = try ContentTypeDetector(database: Self.database)
        let threads = try #require(TypingThreads([try detector.sibling()]))
        let head = [UInt8](repeating: UInt8(ascii: "a"), count: ContentTypeDetector.headBytes)
        let count = 300
        for index in 0..<count { threads.submit(index, head) }
        let typed = threads.finish()
        expectEqual(typed.count, count)
        expectEqual(Set(typed.values), [detector.type(of: head)])
    }

    @Test("no detectors: no threads, and the caller types on its own thread")
    func noDetectorsNoThreads() {
        expect(TypingThreads([]) == nil)
    }
}
