import AirlockChild
import AirlockSystem
import AirlockTestSupport
import AirlockZip
import Testing

/// The drop's reader for archive checks serves small reads from a window read
/// ahead: whatever the order of reads, each must return exactly the drop's bytes.
@Suite("ZIP reader: reads served from the window read ahead are the drop's bytes")
struct ZipReaderWindowTests {
    @Test("reads forwards, backwards, straddling the window and past its end return the bytes at their offsets")
    func readsMatchTheDrop() throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(200 * 1024 + 17)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let descriptor = try ScratchFile.holding(bytes)
        defer { descriptor.close() }
        let reader = ZipDirectory.Reader(file: DropFile(descriptor), size: Int64(bytes.count))
        // Small reads walking forwards (as local records are checked), then jumps
        // back and forth, reads larger than the window, and reads ending at the end.
        var requests: [(Int, Int)] = stride(from: 0, to: 70_000, by: 47).map { ($0, 30) }
        requests += (0..<500).map { _ in
            let count = [0, 1, 30, 4_096, 16_384, 16_385, 70_000].randomElement(using: &generator)!
            return (Int.random(in: 0...(bytes.count - count), using: &generator), count)
        }
        requests += [(bytes.count - 30, 30), (bytes.count, 0), (65_530, 12), (0, 30)]
        for (offset, count) in requests {
            let got = try reader.bytes(at: Int64(offset), count: count)
            expect(got[...] == bytes[offset..<(offset + count)], "at \(offset), \(count) bytes")
        }
    }

    @Test("a read past the end is refused as malformed, with or without a window")
    func pastTheEnd() throws {
        let descriptor = try ScratchFile.holding([UInt8](repeating: 7, count: 1_000))
        defer { descriptor.close() }
        let reader = ZipDirectory.Reader(file: DropFile(descriptor), size: 1_000)
        _ = try reader.bytes(at: 0, count: 30)
        for (offset, count) in [(990, 11), (1_000, 1), (-1, 2), (0, 20_000)] as [(Int64, Int)] {
            do {
                _ = try reader.bytes(at: offset, count: count)
                expect(false, "at \(offset), \(count) bytes: read")
            } catch {
                guard case .malformed = error else { expect(false, "\(error)"); continue }
            }
        }
    }
}
