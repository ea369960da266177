@testable import AirlockFormats
@testable import AirlockFraming
import AirlockPolicy
import AirlockTestSupport
import Testing

/// A tar built block by block: headers with a correct checksum, data padded to 512.
private struct TarBuilder {
    var bytes: [UInt8] = []

    static func header(_ name: String, type: UInt8, size: Int, ustar: Bool = true) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        block.replaceSubrange(0..<name.utf8.count, with: Array(name.utf8))
        let octal = Array(String(size, radix: 8).utf8)
        let field = [UInt8](repeating: 0x30, count: 11 - octal.count) + octal + [0]
        block.replaceSubrange(124..<136, with: field)
        block[156] = type
        if ustar { block.replaceSubrange(257..<265, with: Array("ustar\u{0}00".utf8)) }
        block.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
        let sum = block.reduce(0) { $0 + Int($1) }
        let digits = Array(String(sum, radix: 8).utf8)
        block.replaceSubrange(148..<156, with: [UInt8](repeating: 0x30, count: 6 - digits.count) + digits + [0, 0x20])
        return block
    }

    mutating func add(_ name: String, type: UInt8 = UInt8(ascii: "0"), data: [UInt8] = [], declared: Int? = nil,
                      ustar: Bool = true) {
        bytes += TarBuilder.header(name, type: type, size: declared ?? data.count, ustar: ustar)
        bytes += data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
    }

    mutating func pax(_ records: [String: String], global: Bool = false) {
        var text: [UInt8] = []
        for (key, value) in records.sorted(by: { $0.key < $1.key }) {
            let body = " \(key)=\(value)\n"
            var length = body.utf8.count + 1
            while String(length).utf8.count + body.utf8.count != length { length += 1 }
            text += Array("\(length)\(body)".utf8)
        }
        add("PaxHeader", type: global ? UInt8(ascii: "g") : UInt8(ascii: "x"), data: text)
    }

    mutating func end(padding: Int = 1024) { bytes += [UInt8](repeating: 0, count: padding) }
}

/// Runs the framing over `bytes` in chunks of `chunk` bytes, then ends the stream.
private func frame(_ bytes: [UInt8], chunk: Int = 512) -> TarFraming {
    var framing = TarFraming()
    var start = 0
    while start < bytes.count {
        let end = min(start + chunk, bytes.count)
        bytes[start..<end].withUnsafeBytes { framing.consume($0) }
        start = end
    }
    framing.finish()
    return framing
}

@Suite("Tar streams: identification by content, and airlock's own reading of tar headers")
struct TarStreamTests {
    @Test("every framing a supported compressor may start with is identified")
    func compressorFramings() {
        let pad = [UInt8](repeating: 0, count: 20)
        for low in UInt8(0x50)...UInt8(0x5F) {
            expectEqual(ArchiveFormat.sniff([low, 0x2A, 0x4D, 0x18] + pad), .tarZstd, "skippable frame \(low)")
        }
        expectEqual(ArchiveFormat.sniff([0x28, 0xB5, 0x2F, 0xFD] + pad), .tarZstd)
        expectEqual(ArchiveFormat.sniff(Array("LZIP".utf8) + [1] + pad), .tarLzip)
        expectEqual(ArchiveFormat.sniff(Array("LZIP".utf8) + [0] + pad), nil)
        // bzip2: "BZh", the block size, then a block's magic or the stream end's (an empty stream).
        expectEqual(ArchiveFormat.sniff(Array("BZh9".utf8) + [0x31, 0x41, 0x59, 0x26, 0x53, 0x59] + pad), .tarBzip2)
        expectEqual(ArchiveFormat.sniff(Array("BZh1".utf8) + [0x17, 0x72, 0x45, 0x38, 0x50, 0x90] + pad), .tarBzip2)
        expectEqual(ArchiveFormat.sniff(Array("BZh9".utf8) + pad), nil, "no block after the size: libarchive's filter does not take it")
        expectEqual(ArchiveFormat.sniff(Array("BZh0".utf8) + [0x31, 0x41, 0x59, 0x26, 0x53, 0x59] + pad), nil)
        // lzma -6: properties 0x5D, 8 MiB dictionary, unknown size, range coder's zero byte.
        let lzma: [UInt8] = [0x5D, 0x00, 0x00, 0x80, 0x00] + [UInt8](repeating: 0xFF, count: 8) + [0x00]
        expectEqual(ArchiveFormat.sniff(lzma + pad), .tarLzma)
        var odd = lzma
        odd[3] = 0x81  // a dictionary size that is neither 2^n nor 2^n + 2^(n-1)
        expectEqual(ArchiveFormat.sniff(odd + pad), nil)
        expectEqual(ArchiveFormat.sniff(Array("bplist00".utf8) + pad), nil)
    }

    @Test("a V7 header, without the ustar magic, is a tar by its checksum alone")
    func v7ByChecksum() {
        var v7 = TarBuilder.header("a.txt", type: UInt8(ascii: "0"), size: 6, ustar: false)
        expectEqual(ArchiveFormat.sniff(v7), .tar)
        v7[0] ^= 1
        expectEqual(ArchiveFormat.sniff(v7), nil)
    }

    @Test("the framing yields each entry's raw type, whatever the chunk sizes")
    func entriesAndChunking() {
        var tar = TarBuilder()
        tar.add("d/", type: UInt8(ascii: "5"))
        tar.add("d/a.txt", data: Array("hello\n".utf8))
        tar.add("x.bin", type: UInt8(ascii: "Z"), data: [1, 2, 3])
        tar.add("c.txt", type: UInt8(ascii: "7"), data: [4])
        tar.end()
        for chunk in [1, 7, 512, 100_000] {
            var framing = frame(tar.bytes, chunk: chunk)
            expectEqual(framing.failure, nil)
            expect(framing.ended)
            let kinds = [framing.next(), framing.next(), framing.next(), framing.next()].map { $0?.kind }
            expectEqual(kinds, [.directory, .file, .unknown, .file], "chunk \(chunk)")
            expect(framing.next() == nil)
        }
    }

    @Test("only zero padding may follow the end-of-archive block")
    func endOfArchive() {
        var first = TarBuilder()
        first.add("a.txt", data: [0x61])
        var second = TarBuilder()
        second.add("b.txt", data: [0x62])
        second.end()
        var padded = first
        padded.end(padding: 10240)
        expectEqual(frame(padded.bytes).failure, nil)
        // A tar may end at a block boundary without the marker.
        expectEqual(frame(first.bytes).failure, nil)
        var concatenated = first
        concatenated.end(padding: 512)  // one zero block is already an end for libarchive and tarfile
        concatenated.bytes += second.bytes
        expectEqual(frame(concatenated.bytes).failure, "data follows the end-of-archive marker")
        expectEqual(frame(Array(first.bytes.dropLast(1))).failure, "the tar stream ends inside an entry")
    }

    @Test("a header whose data size readers could read differently is a failure")
    func sizesReadersDisagreeOn() {
        var directory = TarBuilder()
        directory.add("d/", type: UInt8(ascii: "5"), data: [UInt8](repeating: 0x41, count: 512))
        directory.end()
        expect(frame(directory.bytes).failure != nil)
        var global = TarBuilder()
        global.pax(["size": "512"], global: true)
        global.add("a.txt", data: [0x61])
        expectEqual(frame(global.bytes).failure, "a global pax header sets size")
        var corrupt = TarBuilder()
        corrupt.add("a.txt", data: [0x61])
        corrupt.bytes[0] ^= 1
        expectEqual(frame(corrupt.bytes).failure, "a tar header's checksum does not match")
    }

    @Test("extension headers readers resolve differently are a failure")
    func ambiguousNames() {
        var both = TarBuilder()
        both.add("././@LongLink", type: UInt8(ascii: "L"), data: Array("long.txt\u{0}".utf8))
        both.pax(["path": "pax.txt"])
        both.add("a.txt", data: [0x61])
        expectEqual(frame(both.bytes).failure, "both a GNU long name and a pax path name one entry")
        var twice = TarBuilder()
        twice.pax(["mtime": "1"])
        twice.pax(["mtime": "2"])
        twice.add("a.txt", data: [0x61])
        expectEqual(frame(twice.bytes).failure, "two pax headers for one entry")
        var globalPath = TarBuilder()
        globalPath.pax(["path": "g.txt"], global: true)
        expectEqual(frame(globalPath.bytes).failure, "a global pax header sets path")
        // Separate entries may each have their own.
        var separate = TarBuilder()
        separate.pax(["path": "one.txt"])
        separate.add("a.txt", data: [0x61])
        separate.pax(["path": "two.txt"])
        separate.add("b.txt", data: [0x62])
        separate.end()
        expectEqual(frame(separate.bytes).failure, nil)
    }

    @Test("each entry's name is the archive's bytes: a pax path, else a GNU long name, else the header's")
    func namesFromTheBytes() {
        var tar = TarBuilder()
        tar.pax(["path": "cafe\u{301}.txt"])
        tar.add("cafe.txt", data: [0x61])
        tar.add("././@LongLink", type: UInt8(ascii: "L"), data: Array("long/name.txt\u{0}\u{0}".utf8))
        tar.add("long", data: [0x62])
        tar.pax(["path": "evil\u{0}.txt"])
        tar.add("evil.txt", data: [0x63])
        tar.add("plain.txt", data: [0x64])
        tar.end()
        for chunk in [1, 100, 512] {
            var framing = frame(tar.bytes, chunk: chunk)
            expectEqual(framing.failure, nil)
            let names = [framing.next(), framing.next(), framing.next(), framing.next()].map { $0?.name }
            expectEqual(names, [Array("cafe\u{301}.txt".utf8), Array("long/name.txt".utf8), Array("evil\u{0}.txt".utf8),
                              Array("plain.txt".utf8)], "chunk \(chunk)")
        }
    }

    @Test("a name or link target that a NUL, or an empty record, makes readers read differently is a failure")
    func namesReadersDisagreeOn() {
        func failure(_ build: (inout TarBuilder) -> Void) -> String? {
            var tar = TarBuilder()
            build(&tar)
            tar.end()
            return frame(tar.bytes).failure
        }
        expectEqual(failure {
            $0.add("././@LongLink", type: UInt8(ascii: "L"), data: Array("evil\u{0}.txt\u{0}".utf8))
            $0.add("evil", data: [0x61])
        }, "a GNU long name holds bytes after its terminating NUL")
        expectEqual(failure {
            $0.add("././@LongLink", type: UInt8(ascii: "L"), data: [0, 0])
            $0.add("a.txt", data: [0x61])
        }, "an empty GNU long name")
        expectEqual(failure {
            $0.pax(["path": ""])
            $0.add("a.txt", data: [0x61])
        }, "an empty pax path record")
        expectEqual(failure {
            $0.pax(["linkpath": "target\u{0}.txt"])
            $0.add("link", type: UInt8(ascii: "2"))
        }, "a link target holds a NUL byte")
        expectEqual(failure {
            $0.pax(["path": "one.txt", "GNU.sparse.name": "two.txt"])
            $0.add("a.txt", data: [0x61])
        }, "a pax path and a GNU.sparse.name record name one entry differently")
        expectEqual(failure {
            $0.pax(["path": "same.txt", "GNU.sparse.name": "same.txt"])
            $0.add("a.txt", data: [0x61])
        }, nil)
    }

    @Test("a name prefix outside a POSIX ustar header is a failure")
    func prefixOutsideUstar() {
        var v7 = TarBuilder.header("a.txt", type: UInt8(ascii: "0"), size: 0, ustar: false)
        expectEqual(frame(v7 + [UInt8](repeating: 0, count: 1024)).failure, nil)
        v7[345] = 0x65
        v7.replaceSubrange(148..<156, with: [UInt8](repeating: 0x20, count: 8))
        let sum = Array(String(v7.reduce(0) { $0 + Int($1) }, radix: 8).utf8)
        v7.replaceSubrange(148..<156, with: [UInt8](repeating: 0x30, count: 6 - sum.count) + sum + [0, 0x20])
        expectEqual(frame(v7 + [UInt8](repeating: 0, count: 1024)).failure, "a tar header has fields only some readers read")
    }

    @Test("a sparse map has one meaning or is a failure")
    func sparseMaps() {
        func check(_ fields: [Substring], stored: Int64, logical: Int64) -> String? {
            var map = TarSparseMap()
            map.add(paxNumbers: fields)
            map.finish(stored: stored, logical: logical)
            return map.failure
        }
        expect(check(["65536", "4096", "262144", "0"], stored: 4096, logical: 262144) == nil)
        expect(check(["8192", "512", "0", "512"], stored: 1024, logical: 16384) != nil)
        expect(check(["65536", "4096"], stored: 512, logical: 262144) != nil)
        expect(check(["65536", "4096"], stored: 4096, logical: 4096) != nil)
        expect(check(["65536"], stored: 0, logical: 65536) != nil)
    }

    @Test("a pax header must precede a POSIX ustar header")
    func paxBeforeUstar() {
        var tar = TarBuilder()
        tar.pax(["path": "p.txt"])
        tar.add("v7.txt", data: [0x61], ustar: false)
        tar.end()
        expectEqual(frame(tar.bytes).failure, "a pax header is followed by a non-ustar header")
    }

    @Test("a pax size record, not the header's, says how much data follows")
    func paxSize() {
        var tar = TarBuilder()
        tar.pax(["size": "600"])
        tar.add("big.bin", data: [UInt8](repeating: 7, count: 600), declared: 0)
        tar.add("after.txt", data: [1])
        tar.end()
        var framing = frame(tar.bytes)
        expectEqual(framing.failure, nil)
        expectEqual(framing.next()?.size, 600)
        expectEqual(framing.next()?.name, Array("after.txt".utf8))
    }

    @Test("volume labels and Solaris ACLs, which yield no entry, are remembered as unsupported")
    func headersWithoutEntries() {
        var tar = TarBuilder()
        tar.add("LABEL", type: UInt8(ascii: "V"))
        tar.add("a.txt", data: [0x61])
        tar.end()
        var framing = frame(tar.bytes)
        expectEqual(framing.unsupported?.typeFlag, "'V'")
        expectEqual(framing.next()?.name, Array("a.txt".utf8))
    }
}
