import AirlockSystem
import AirlockTestSupport
import Testing

@Suite("ByteSearch: memchr(3) finds the first byte at or after an offset")
struct ByteSearchTests {
    @Test("the first match at or after start, nil past the last one and in an empty buffer")
    func finds() {
        let bytes: [UInt8] = Array("ab/cd/ef".utf8)
        bytes.withUnsafeBytes { buffer in
            expectEqual(ByteSearch.firstIndex(of: UInt8(ascii: "/"), in: buffer), 2)
            expectEqual(ByteSearch.firstIndex(of: UInt8(ascii: "/"), in: buffer, from: 2), 2)
            expectEqual(ByteSearch.firstIndex(of: UInt8(ascii: "/"), in: buffer, from: 3), 5)
            expectEqual(ByteSearch.firstIndex(of: UInt8(ascii: "/"), in: buffer, from: 6), nil)
            expectEqual(ByteSearch.firstIndex(of: UInt8(ascii: "/"), in: buffer, from: buffer.count), nil)
            expectEqual(ByteSearch.firstIndex(of: UInt8(ascii: "a"), in: buffer), 0)
            expectEqual(ByteSearch.firstIndex(of: UInt8(ascii: "f"), in: buffer), 7)
            expectEqual(ByteSearch.firstIndex(of: 0, in: buffer), nil)
        }
        [UInt8]().withUnsafeBytes { expectEqual(ByteSearch.firstIndex(of: 0, in: $0), nil) }
    }

    @Test("every byte value, at every offset of a slice, agrees with a plain loop")
    func agreesWithLoop() {
        let bytes: [UInt8] = (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 3) }
        bytes.withUnsafeBytes { all in
            let slice = UnsafeRawBufferPointer(rebasing: all[5..<590])
            for value in [UInt8(0), 1, 47, 200, 255] {
                for start in stride(from: 0, through: slice.count, by: 13) {
                    let expected = (start..<slice.count).first { slice[$0] == value }
                    expectEqual(ByteSearch.firstIndex(of: value, in: slice, from: start), expected, "\(value) from \(start)")
                }
            }
        }
    }
}
