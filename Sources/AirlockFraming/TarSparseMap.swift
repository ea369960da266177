import AirlockFormats

/// The map of a GNU sparse entry (type `S`): the regions of the file that hold
/// data, stored in the header (four slots) and in continuation blocks (21
/// each). Readers tolerate a disordered or inconsistent map differently —
/// tarfile, libarchive and GNU tar were seen to produce three different files
/// from one — so airlock accepts only a map with one meaning: regions in order,
/// not overlapping, their lengths adding up to the data stored, within the
/// file's declared size.
struct TarSparseMap {
    private(set) var regions: [(offset: Int64, length: Int64)] = []
    var isEmpty: Bool { regions.isEmpty && failure == nil }
    private var sawEmptySlot = false
    private(set) var failure: String?

    /// The slots of a header (4, from offset 386) or a continuation block (21, from 0).
    mutating func add(_ block: UnsafeRawBufferPointer, slots: Int, at start: Int) {
        for slot in 0..<slots {
            let base = start + slot * 24
            guard let offset = TarHeader.number(block[base..<(base + 12)]),
                  let length = TarHeader.number(block[(base + 12)..<(base + 24)]) else {
                return fail("a GNU sparse map entry is not a number")
            }
            if offset == 0 && length == 0 {
                sawEmptySlot = true
                continue
            }
            guard !sawEmptySlot else { return fail("a GNU sparse map continues after an empty slot") }
            let end = regions.last.map { $0.offset + $0.length } ?? 0
            guard offset >= end, length < 1 << 60, offset < 1 << 60 else {
                return fail("a GNU sparse map's regions are out of order or overlap")
            }
            regions.append((offset, length))
        }
    }

    /// Adds regions from a pax GNU sparse 0.1 map (`offset,length,...`) or the
    /// 0.0 records (`offset`, `numbytes` in turn), given as their text values.
    mutating func add(paxNumbers values: [Substring]) {
        guard values.count % 2 == 0 else { return fail("a pax sparse map has an odd number of fields") }
        var index = 0
        while index < values.count {
            guard let offset = Int64(values[index]), let length = Int64(values[index + 1]), offset >= 0, length >= 0,
                  offset < 1 << 60, length < 1 << 60 else {
                return fail("a pax sparse map entry is not a number")
            }
            let end = regions.last.map { $0.offset + $0.length } ?? 0
            guard offset >= end else { return fail("a pax sparse map's regions are out of order or overlap") }
            regions.append((offset, length))
            index += 2
        }
    }

    /// Whether the map fits the entry: `stored` data bytes, `logical` file size.
    mutating func finish(stored: Int64, logical: Int64) {
        guard failure == nil else { return }
        let total = regions.reduce(Int64(0)) { $0 + $1.length }
        if total != stored { return fail("a GNU sparse map holds \(total) bytes, its header stores \(stored)") }
        let end = regions.last.map { $0.offset + $0.length } ?? 0
        if end > logical { return fail("a GNU sparse map reaches past the file's size \(logical)") }
    }

    private mutating func fail(_ detail: String) {
        if failure == nil { failure = detail }
    }
}
