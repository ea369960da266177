/// A ustar archive of regular files, each `(name, size)` filled with its index + 1
/// (as a byte), ended by the two zero blocks: for tests that need many files of
/// known sizes without a fixture on disk.
func ustarArchive(_ files: [(name: String, size: Int)]) -> [UInt8] {
    var bytes: [UInt8] = []
    for (index, file) in files.enumerated() {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int) { header.replaceSubrange(offset..<(offset + text.utf8.count), with: Array(text.utf8)) }
        put(file.name, at: 0)
        put("0000644\0", at: 100)
        let octal = String(file.size, radix: 8)
        put(String(repeating: "0", count: 11 - octal.count) + octal + "\0", at: 124)
        put("00000000000\0", at: 136)
        header[156] = UInt8(ascii: "0")
        put("ustar\u{0}00", at: 257)
        put("        ", at: 148)
        let sum = String(header.reduce(0) { $0 + Int($1) }, radix: 8)
        put(String(repeating: "0", count: 6 - sum.count) + sum + "\0 ", at: 148)
        bytes += header + [UInt8](repeating: UInt8(truncatingIfNeeded: index + 1), count: file.size)
            + [UInt8](repeating: 0, count: (512 - file.size % 512) % 512)
    }
    return bytes + [UInt8](repeating: 0, count: 1024)
}
