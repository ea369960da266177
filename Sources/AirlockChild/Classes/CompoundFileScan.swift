/// Finds macros in an OLE2 compound file (Word, Excel and PowerPoint 97-2003)
/// as it streams past, without following its allocation tables: every
/// 128-byte-aligned record after the header is read as a directory entry might
/// be (directory sectors are always there, at any sector size), so no entry the
/// real directory holds is missed; an entry named like a VBA project's storage
/// or stream means VBA. BIFF BOUNDSHEET records of macro sheets (Excel 4.0) are
/// looked for anywhere in the file.
struct CompoundFileScan {
    /// Storage and stream names of VBA projects (compared without case):
    /// Word's `Macros`, Excel's `_VBA_PROJECT_CUR`, the `VBA` storage and its `_VBA_PROJECT` stream.
    static let vbaNames: Set<[UInt8]> = Set(["vba", "_vba_project", "_vba_project_cur", "macros"].map { Array($0.utf8) })

    private var offset = 0
    private var record: [UInt8] = []
    private var sheets = CarryWindow(lookBehind: 0, lookAhead: 12)
    private(set) var macros = false

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        guard !macros else { return }
        readRecords(chunk)
        var found = false
        sheets.feed(chunk) { bytes, positions in
            for index in positions where bytes[index] == 0x85 && bytes[index + 1] == 0 && !found {
                found = CompoundFileScan.isMacroSheet(bytes, index)
            }
        }
        if found { macros = true }
    }

    private mutating func readRecords(_ chunk: UnsafeRawBufferPointer) {
        var rest = chunk
        // The 512-byte header is no record.
        if offset < 512 {
            let skipped = min(512 - offset, rest.count)
            offset += skipped
            rest = UnsafeRawBufferPointer(rebasing: rest[skipped...])
        }
        while !rest.isEmpty {
            let taken = min(128 - record.count, rest.count)
            record.append(contentsOf: rest[..<taken])
            rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
            offset += taken
            if record.count == 128 {
                if CompoundFileScan.isVBAEntry(record) { macros = true }
                record.removeAll(keepingCapacity: true)
            }
        }
    }

    /// A directory entry: a UTF-16LE name of `length` bytes with its terminator
    /// (at most 64), then its type (storage 1, stream 2).
    static func isVBAEntry(_ entry: [UInt8]) -> Bool {
        let length = Int(entry[64]) | Int(entry[65]) << 8
        guard length >= 4, length <= 64, length % 2 == 0, entry[66] == 1 || entry[66] == 2 else { return false }
        var name: [UInt8] = []
        for index in stride(from: 0, to: length - 2, by: 2) {
            guard entry[index + 1] == 0 else { return false }
            name.append(ByteText.lower(entry[index]))
        }
        return vbaNames.contains(name)
    }

    /// BOUNDSHEET (0x0085): position (4), visibility (0 to 2), sheet type (1:
    /// macro sheet), then the name: a character count and, in BIFF8, a flags
    /// byte (bit 0: two bytes a character). The record's length must agree.
    static func isMacroSheet(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Bool {
        guard index + 12 <= bytes.count else { return false }
        let length = Int(bytes[index + 2]) | Int(bytes[index + 3]) << 8
        let visibility = bytes[index + 8], type = bytes[index + 9], count = Int(bytes[index + 10]), flags = bytes[index + 11]
        guard visibility <= 2, type == 1, count >= 1, count <= 31 else { return false }
        let biff8 = (flags == 0 || flags == 1) && length == 8 + count * (flags == 1 ? 2 : 1)
        return biff8 || length == 7 + count
    }
}
