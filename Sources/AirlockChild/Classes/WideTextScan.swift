/// A file in UTF-16, as browsers read one where it opens with a byte order
/// mark (FF FE, FE FF), and XML parsers also where it opens with a `<` as one
/// UTF-16 code unit (`3C 00`, `00 3C`); Windows Script Host and PowerShell read
/// scripts so marked too. Its bytes hold no `<script` or `CreateObject(` a byte
/// search could see (`<\0s\0c\0…`), so each code unit is narrowed to one byte,
/// ASCII as itself and anything else as 0xFF (never part of what the checks
/// look for): the narrowed file goes through a `MarkupScan` of its own, and its
/// narrowed head is judged as a head is.
struct WideTextScan {
    private enum Order { case littleEndian, bigEndian }
    /// The file's first two bytes, which decide its order.
    private var lead: [UInt8] = []
    private var order: Order?
    /// A code unit's first byte, where a chunk ended between its two.
    private var pending: UInt8?
    private var scan = MarkupScan()
    /// The narrowed file's first bytes, for `MarkupHead`.
    private var head: [UInt8] = []
    /// The narrowed chunk, its storage kept from chunk to chunk.
    private var narrowed: [UInt8] = []

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        if lead.count == 2 {
            if order != nil { narrow(chunk) }
            return
        }
        let taken = min(2 - lead.count, chunk.count)
        lead.append(contentsOf: chunk.prefix(taken))
        guard lead.count == 2 else { return }
        decide()
        if order != nil { narrow(UnsafeRawBufferPointer(rebasing: chunk[taken...])) }
    }

    mutating func finish() {
        // A file shorter than two bytes holds no code unit.
        guard order != nil else { return }
        scan.finish()
    }

    /// The narrowed file's first `FileHead.length` bytes, where the file is UTF-16.
    var narrowedHead: [UInt8]? { order != nil ? head : nil }

    /// Whether the file is UTF-16 and active content as such.
    func isActive() -> Bool {
        order != nil && scan.isActive(markupHead: MarkupHead.isMarkup(head), htmlHead: MarkupHead.isHTML(head))
    }

    /// Decides the order from the first two bytes, and narrows them unless they are a byte order mark.
    private mutating func decide() {
        switch (lead[0], lead[1]) {
        case (0xFF, 0xFE): order = .littleEndian
        case (0xFE, 0xFF): order = .bigEndian
        case (0x3C, 0x00): order = .littleEndian
        case (0x00, 0x3C): order = .bigEndian
        default: return
        }
        if lead[0] == 0x3C || lead[0] == 0x00 { lead.withUnsafeBytes { narrow($0) } }
    }

    /// Narrows `bytes` (the file's next ones) code unit by code unit into the scan.
    private mutating func narrow(_ bytes: UnsafeRawBufferPointer) {
        guard let order, !bytes.isEmpty else { return }
        narrowed.removeAll(keepingCapacity: true)
        var index = 0
        if let first = pending {
            narrowed.append(Self.narrow(first, bytes[0], order))
            pending = nil
            index = 1
        }
        while index + 1 < bytes.count {
            narrowed.append(Self.narrow(bytes[index], bytes[index + 1], order))
            index += 2
        }
        if index < bytes.count { pending = bytes[index] }
        if head.count < FileHead.length { head.append(contentsOf: narrowed.prefix(FileHead.length - head.count)) }
        narrowed.withUnsafeBytes { scan.feed($0) }
    }

    @inline(__always) private static func narrow(_ first: UInt8, _ second: UInt8, _ order: Order) -> UInt8 {
        let (low, high) = order == .littleEndian ? (first, second) : (second, first)
        return high == 0 && low < 0x80 ? low : 0xFF
    }
}
