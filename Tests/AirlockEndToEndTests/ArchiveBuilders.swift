import Foundation

/// Stored ZIP archives built from a declarative list of entries, for name tests:
/// each entry's header name as raw bytes, its flags and its extra fields.
struct ZipBuild {
    struct Entry {
        var name: [UInt8]
        var data: [UInt8]
        var utf8Flag = false
        var extra: [UInt8] = []
    }

    var entries: [Entry]

    /// An Info-ZIP Unicode path field (0x7075) for `header`, naming `unicode`,
    /// with the CRC of `header`, or a wrong one.
    static func unicodePath(for header: [UInt8], naming unicode: String, crcMatches: Bool = true) -> [UInt8] {
        let body = [1] + le32(crc32(header) ^ (crcMatches ? 0 : 1)) + Array(unicode.utf8)
        return le16(0x7075) + le16(UInt16(body.count)) + body
    }

    var bytes: Data {
        var out: [UInt8] = [], central: [UInt8] = []
        for entry in entries {
            let offset = UInt32(out.count), crc = ZipBuild.crc32(entry.data), flags: UInt16 = entry.utf8Flag ? 0x0800 : 0
            let common = le16(20) + le16(flags) + le16(0) + le32(0) + le32(crc) + le32(UInt32(entry.data.count))
                + le32(UInt32(entry.data.count)) + le16(UInt16(entry.name.count)) + le16(UInt16(entry.extra.count))
            out += le32(0x0403_4B50) + common + entry.name + entry.extra + entry.data
            central += le32(0x0201_4B50) + le16(20) + common + le16(0) + le16(0) + le16(0) + le32(0) + le32(offset) + entry.name + entry.extra
        }
        let end = le32(0x0605_4B50) + le16(0) + le16(0) + le16(UInt16(entries.count)) + le16(UInt16(entries.count))
            + le32(UInt32(central.count)) + le32(UInt32(out.count)) + le16(0)
        return Data(out + central + end)
    }

    /// CRC-32 (the reflected 0xEDB88320 polynomial ZIP uses), a byte at a time
    /// from a table of the 256 bytes' remainders: eight times fewer steps than bit
    /// by bit, which cost a debug build seconds on the MiB-sized entries tests build.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        crcTable.withUnsafeBufferPointer { table in
            for byte in bytes { crc = (crc >> 8) ^ table[Int((crc ^ UInt32(byte)) & 0xFF)] }
        }
        return ~crc
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }
}

/// A tar of regular files, each named by raw bytes in a ustar header, or in a
/// pax `path` record (with `hdrcharset=BINARY` when asked) for names that are not UTF-8.
struct TarBuild {
    struct Entry {
        var name: [UInt8]
        var data: [UInt8]
        var paxBinary = false
    }

    var entries: [Entry]

    var bytes: Data {
        var out: [UInt8] = []
        for entry in entries {
            if entry.paxBinary {
                let records = TarBuild.paxRecord("hdrcharset", Array("BINARY".utf8)) + TarBuild.paxRecord("path", entry.name)
                out += TarBuild.header(name: Array("PaxHeaders/x".utf8), size: records.count, type: UInt8(ascii: "x")) + TarBuild.padded(records)
                out += TarBuild.header(name: Array("placeholder".utf8), size: entry.data.count, type: UInt8(ascii: "0"))
            } else {
                out += TarBuild.header(name: entry.name, size: entry.data.count, type: UInt8(ascii: "0"))
            }
            out += TarBuild.padded(entry.data)
        }
        return Data(out + [UInt8](repeating: 0, count: 1024))
    }

    static func paxRecord(_ key: String, _ value: [UInt8]) -> [UInt8] {
        let body = [0x20] + Array(key.utf8) + [0x3D] + value + [0x0A]
        var length = body.count + 1
        while String(length).utf8.count + body.count != length { length += 1 }
        return Array(String(length).utf8) + body
    }

    static func padded(_ data: [UInt8]) -> [UInt8] { data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512) }

    static func header(name: [UInt8], size: Int, type: UInt8) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ bytes: [UInt8], at offset: Int) { for (index, byte) in bytes.enumerated() { block[offset + index] = byte } }
        func octal(_ value: Int, width: Int) -> [UInt8] {
            let text = String(value, radix: 8)
            return Array((String(repeating: "0", count: width - 1 - text.count) + text).utf8) + [0]
        }
        put(name, at: 0)
        put(octal(0o644, width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        put(octal(size, width: 12), at: 124)
        put(octal(0, width: 12), at: 136)
        put(Array(repeating: 0x20, count: 8), at: 148)
        block[156] = type
        put(Array("ustar\u{0}00".utf8), at: 257)
        let sum = block.reduce(0) { $0 + Int($1) }
        put(Array((String(repeating: "0", count: 6 - String(sum, radix: 8).count) + String(sum, radix: 8)).utf8) + [0, 0x20], at: 148)
        return block
    }
}

private func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
private func le32(_ value: UInt32) -> [UInt8] { le16(UInt16(value & 0xFFFF)) + le16(UInt16(value >> 16)) }
