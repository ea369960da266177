/// Finds macros in Office Open XML and OpenDocument files (ZIPs) as they stream
/// past, without trusting part names or the extension: every local file header
/// anywhere in the file is read (not only those the directory lists in order,
/// so a part hidden inside another part's data is still seen), the parts that
/// declare content ([Content_Types].xml, relationships, ODF's manifest) are
/// inflated within a budget and searched for a VBA project or an Excel 4.0
/// macro sheet, and part names are checked for macro sheets, VBA projects and
/// ODF's Basic and script libraries. OPC part names compare without case.
struct ZipPartScan {
    /// What a declaring part may inflate to, and how many may be read at once.
    static let partBudget = 4 << 20
    static let maxOpenParts = 16

    /// Part names (lowercase) that are macros whatever the declarations say: a
    /// VBA project anywhere, and at the package's root Excel 4.0 macro sheets
    /// and ODF's Basic and script libraries (a source tree's own `scripts/`
    /// further down is not one).
    static let macroFragments = ["vbaproject"].map { Array($0.utf8) }
    static let macroPrefixes = ["xl/macrosheets/", "basic/", "scripts/"].map { Array($0.utf8) }
    /// What a declaring part names when the package holds macros: the VBA
    /// project's content and relationship types, Excel 4.0 macro sheets, and
    /// ODF manifest paths of Basic and script libraries.
    static let macroDeclarations = ["vbaproject", "macrosheet", "full-path=\"basic/", "full-path=\"scripts/"].map { Array($0.utf8) }

    private var signature = CarryWindow(lookBehind: 0, lookAhead: 3)
    private var parts: [LocalPart] = []
    private(set) var macros = false

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        guard !macros else { return }
        for index in parts.indices { parts[index].feed(chunk) }
        var starts: [Int] = []
        // The window's positions are offsets into carry + chunk; a header found
        // there starts `carried` bytes before this chunk.
        var carried = 0
        signature.feed(chunk) { bytes, positions in
            carried = bytes.count - chunk.count
            for index in positions where bytes[index] == 0x50 && bytes[index + 1] == 0x4B && bytes[index + 2] == 3 && bytes[index + 3] == 4 {
                starts.append(index + 4 - carried)
            }
        }
        // A signature is four bytes and at most three are carried, so each starts within this chunk.
        for start in starts {
            var part = LocalPart()
            part.feed(UnsafeRawBufferPointer(rebasing: chunk[start...]))
            parts.append(part)
        }
        settle()
    }

    mutating func finish() {
        for index in parts.indices { parts[index].finish() }
        settle()
    }

    private mutating func settle() {
        if parts.contains(where: \.macros) { macros = true }
        parts.removeAll { $0.done }
        // More declaring parts open at once than any package has: it cannot be cleared.
        if parts.count > ZipPartScan.maxOpenParts { macros = true }
    }
}

/// One local file header and, for a declaring part, its data.
private struct LocalPart {
    /// The header after its signature, up to and including the name.
    private var header: [UInt8] = []
    private var extraLeft = -1
    private var storedLeft = 0
    private var stored = false
    private var inflater: Inflater?
    private var content: [UInt8] = []
    private(set) var macros = false
    private(set) var done = false

    mutating func feed(_ chunk: UnsafeRawBufferPointer) {
        guard !done else { return }
        var rest = chunk
        if extraLeft < 0 {
            rest = readHeader(rest)
            if done || extraLeft < 0 { return }
        }
        let skipped = min(extraLeft, rest.count)
        extraLeft -= skipped
        rest = UnsafeRawBufferPointer(rebasing: rest[skipped...])
        guard extraLeft == 0, !rest.isEmpty else { return }
        if let inflater {
            inflater.feed(rest) { content.append(contentsOf: $0) }
            switch inflater.state {
            case .more: return
            case .overBudget: macros = true
            case .ended, .failed: break
            }
            finish()
        } else if stored {
            let taken = min(storedLeft, rest.count, ZipPartScan.partBudget - content.count)
            content.append(contentsOf: rest[..<taken])
            storedLeft -= taken
            if storedLeft == 0 || content.count >= ZipPartScan.partBudget { finish() }
        }
    }

    /// Reads the fixed header and the name, then decides what the part is.
    private mutating func readHeader(_ chunk: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var rest = chunk
        if header.count < 26 {
            let taken = min(26 - header.count, rest.count)
            header.append(contentsOf: rest[..<taken])
            rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
            guard header.count == 26 else { return rest }
        }
        let nameLength = Int(header[22]) | Int(header[23]) << 8
        let taken = min(26 + nameLength - header.count, rest.count)
        header.append(contentsOf: rest[..<taken])
        rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
        return header.count == 26 + nameLength ? decide(rest) : rest
    }

    private mutating func decide(_ rest: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let name = header[26...].map(ByteText.lower)
        if ZipPartScan.macroFragments.contains(where: { ByteText.contains(name, $0) })
            || ZipPartScan.macroPrefixes.contains(where: { name.starts(with: $0) }) {
            macros = true
            done = true
            return rest
        }
        let declaring = name == Array("[content_types].xml".utf8) || name.hasSuffix(".rels") || name == Array("meta-inf/manifest.xml".utf8)
        let method = Int(header[4]) | Int(header[5]) << 8
        guard declaring, method == 0 || method == 8 else {
            done = true
            return rest
        }
        extraLeft = Int(header[24]) | Int(header[25]) << 8
        if method == 8 {
            inflater = Inflater(raw: true, budget: ZipPartScan.partBudget)
        } else {
            stored = true
            let size = header[14..<18].reversed().reduce(0) { $0 << 8 | Int($1) }
            // A stored part whose size is in a data descriptor: read to the budget.
            storedLeft = size > 0 ? size : ZipPartScan.partBudget
        }
        return rest
    }

    mutating func finish() {
        guard !done else { return }
        done = true
        let lowered = content.map(ByteText.lower)
        if ZipPartScan.macroDeclarations.contains(where: { ByteText.contains(lowered, $0) }) { macros = true }
    }
}

extension Array where Element == UInt8 {
    fileprivate func hasSuffix(_ text: String) -> Bool { count >= text.utf8.count && suffix(text.utf8.count).elementsEqual(text.utf8) }
}
