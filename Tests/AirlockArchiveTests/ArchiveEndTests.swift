@testable import AirlockArchive
import AirlockChild
import AirlockSystem
import AirlockTestSupport
@testable import AirlockZip
import Testing

/// A newc cpio of `entries` (name, data) and its trailer, padded with zeros to `block`.
private func newc(_ entries: [(String, String)], block: Int = 512) -> [UInt8] {
    var out: [UInt8] = []
    for (name, data) in entries + [("TRAILER!!!", "")] {
        let fields = [1, 0o100644, 0, 0, 1, 0, data.utf8.count, 0, 0, 0, 0, name.utf8.count + 1, 0]
        out += Array("070701".utf8) + fields.flatMap { field -> [UInt8] in
            let digits = String(field, radix: 16, uppercase: true)
            return Array((String(repeating: "0", count: 8 - digits.count) + digits).utf8)
        }
        out += Array(name.utf8) + [0]
        out += [UInt8](repeating: 0, count: (4 - out.count % 4) % 4) + Array(data.utf8)
        out += [UInt8](repeating: 0, count: (4 - out.count % 4) % 4)
    }
    return out + [UInt8](repeating: 0, count: (block - out.count % block) % block)
}

private func cpioVerdict(_ bytes: [UInt8]) throws -> String {
    let file = try DropFile(ScratchFile.holding(bytes))
    defer { file.descriptor.close() }
    do {
        let listing = try CpioListing(file, size: Int64(bytes.count), limit: 1000)
        return "accepted \(listing.entries.count)"
    } catch {
        guard case .malformed(let detail) = error else { return "\(error)" }
        return detail
    }
}

/// A minimal cabinet header: cbCabinet `end`, and a 20-byte signature reserve when `signature` is given.
private func cabinet(end: UInt32, signature: (offset: UInt32, length: UInt32)? = nil, size: Int) -> [UInt8] {
    var header = Array("MSCF".utf8) + le32(0) + le32(end) + le32(0) + le32(0) + le32(0) + [3, 1] + le16(0) + le16(0)
    header += le16(signature == nil ? 0 : 4) + le16(0) + le16(0)
    if let signature { header += le16(20) + [0, 0] + le32(0x0010_0000) + le32(signature.offset) + le32(signature.length) + le32(0) + le32(0) }
    var bytes = header + [UInt8](repeating: 0, count: max(0, Int(end) - header.count))
    if bytes.count < size { bytes += [0x30] + [UInt8](repeating: 0x01, count: size - bytes.count - 1) }
    return Array(bytes.prefix(size))
}

private func cabinetVerdict(_ bytes: [UInt8]) throws -> String {
    let file = try DropFile(ScratchFile.holding(bytes))
    defer { file.descriptor.close() }
    return try ArchiveEnd.cabinet(ZipDirectory.Reader(file: file, size: Int64(bytes.count))) ?? "accepted"
}

@Suite("After an archive's end only the padding its format defines")
struct ArchiveEndTests {
    @Test("a cpio padded with zeros to any block size is accepted", arguments: [1, 4, 512, 5120, 8192])
    func cpioPadding(block: Int) throws {
        try expectEqual(cpioVerdict(newc([("a.txt", "hello")], block: block)), "accepted 1")
    }

    @Test("bytes after a cpio's trailer are refused, a second archive included")
    func cpioAfterTrailer() throws {
        let first = newc([("a.txt", "hello")])
        // The trailer ends at byte 248 (a.txt's header, name and data, then the trailer's, each to 4 bytes).
        try expectEqual(cpioVerdict(first + [1]), "265 bytes follow the cpio trailer, not zero padding (byte 512)")
        let both = first + newc([("b.txt", "hidden")])
        try expectEqual(cpioVerdict(both), "776 bytes follow the cpio trailer, not zero padding (byte 512)")
    }

    @Test("a cpio without its trailer, or with a header of another format after the first, is refused")
    func cpioStructure() throws {
        let whole = newc([("a.txt", "hello")], block: 1)
        try expectEqual(cpioVerdict(Array(whole[0..<124])), "the cpio archive ends without its TRAILER!!! entry")
        var mixed = whole
        mixed.replaceSubrange(124..<130, with: Array("070707".utf8))
        try expectEqual(cpioVerdict(mixed), "a cpio header at byte 124 lacks the archive's magic")
    }

    @Test("a cabinet ends at cbCabinet, or at the end of the signature its reserve names")
    func cabinetEnd() throws {
        try expectEqual(cabinetVerdict(cabinet(end: 100, size: 100)), "accepted")
        try expectEqual(cabinetVerdict(cabinet(end: 100, size: 116)), "16 bytes follow the end of the cabinet, and they are not its signature")
        try expectEqual(cabinetVerdict(cabinet(end: 100, size: 90)), "the cabinet is truncated: it ends at 100, the drop at 90")
        try expectEqual(cabinetVerdict(cabinet(end: 100, signature: (100, 50), size: 150)), "accepted")
        try expectEqual(cabinetVerdict(cabinet(end: 100, signature: (100, 40), size: 150)), "50 bytes follow the end of the cabinet, and they are not its signature", "a signature that does not reach the end")
        try expectEqual(cabinetVerdict(cabinet(end: 100, signature: (96, 54), size: 150)), "50 bytes follow the end of the cabinet, and they are not its signature", "a signature that does not start at the end")
    }
}
