/// Unicode's canonical caseless match: two names are the same name when
/// NFD(fold(NFD(a))) equals NFD(fold(NFD(b))), with fold the full case folding
/// (CaseFolding.txt, status C and F). `ß`, `ẞ` (U+1E9E) and `ss` meet on one key,
/// and so do NFC and NFD spellings of the same letters.
///
/// The inner NFD is not a formality: folding turns U+0345 (a combining mark of
/// class 240) into ι (a base letter), so folding first would keep `α` + U+0345 +
/// U+0301 and its canonically equivalent `α` + U+0301 + U+0345 apart.
///
/// The tables (the UnicodeTables folder) are generated from Unicode's data files by
/// scripts/make_unicode_tables.py rather than taken from ICU: this module is
/// linked into the decoder child, which starts once per drop, confines itself
/// before reading a byte and runs under a small address-space limit; Swift's own
/// `String` offers neither folding nor a normalised string, only comparison.
public enum CaselessMatch {
    /// The key two names share exactly when they match caselessly: the UTF-8 of
    /// NFD(fold(NFD(text))).
    public static func key(_ text: String) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(text.utf8.count)
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII: folding is lower-casing and nothing decomposes.
            for byte in text.utf8 { key.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) }
            return key
        }
        let folded = canonicalDecomposition(caseFolding(canonicalDecomposition(text.unicodeScalars.map(\.value))))
        for value in folded {
            // Every value comes from a valid scalar or from the tables, which hold only scalars.
            let scalar = Unicode.Scalar(value)!
            key.append(contentsOf: UTF8.encode(scalar)!)
        }
        return key
    }

    /// Full case folding of each scalar.
    public static func caseFolding(_ scalars: [UInt32]) -> [UInt32] {
        var out: [UInt32] = []
        out.reserveCapacity(scalars.count)
        for scalar in scalars {
            guard let index = find(scalar, in: caseFoldKeys) else {
                out.append(scalar)
                continue
            }
            for value in caseFoldValues[index * 3..<index * 3 + 3] where value != 0 { out.append(value) }
        }
        return out
    }

    /// NFD: every scalar fully decomposed, then each run of combining marks put
    /// in canonical order (a stable sort by combining class).
    public static func canonicalDecomposition(_ scalars: [UInt32]) -> [UInt32] {
        var out: [UInt32] = []
        out.reserveCapacity(scalars.count)
        for scalar in scalars { decompose(scalar, into: &out) }
        var start = 0
        while start < out.count {
            guard combiningClass(out[start]) != 0 else { start += 1; continue }
            var end = start
            while end < out.count, combiningClass(out[end]) != 0 { end += 1 }
            if end - start > 1 {
                // Array.sort is not stable; sorting (class, position) pairs is.
                let run = out[start..<end].enumerated().map { (combiningClass($0.element), $0.offset, $0.element) }
                let sorted = run.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
                for (offset, item) in sorted.enumerated() { out[start + offset] = item.2 }
            }
            start = end
        }
        return out
    }

    /// The canonical combining class of a scalar; 0 for most.
    public static func combiningClass(_ scalar: UInt32) -> UInt8 {
        guard let index = find(scalar, in: combiningClassKeys) else { return 0 }
        return combiningClassValues[index]
    }

    private static func decompose(_ scalar: UInt32, into out: inout [UInt32]) {
        // Hangul syllables decompose by arithmetic (The Unicode Standard, section 3.12).
        let sBase: UInt32 = 0xAC00, lBase: UInt32 = 0x1100, vBase: UInt32 = 0x1161, tBase: UInt32 = 0x11A7
        let tCount: UInt32 = 28, nCount: UInt32 = 21 * 28, sCount: UInt32 = 19 * 21 * 28
        if scalar >= sBase, scalar < sBase + sCount {
            let index = scalar - sBase
            out.append(lBase + index / nCount)
            out.append(vBase + (index % nCount) / tCount)
            if index % tCount != 0 { out.append(tBase + index % tCount) }
            return
        }
        guard let index = find(scalar, in: decompositionKeys) else {
            out.append(scalar)
            return
        }
        let start = Int(decompositionOffsets[index]), end = Int(decompositionOffsets[index + 1])
        out.append(contentsOf: decompositionScalars[start..<end])
    }

    /// Binary search of a sorted table.
    private static func find(_ scalar: UInt32, in keys: [UInt32]) -> Int? {
        var low = 0, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < scalar { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == scalar ? low : nil
    }
}
