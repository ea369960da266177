import AirlockPolicy
import AirlockSystem
import AirlockText

/// Checks every string a binary property list holds, before Foundation reads it.
///
/// swift-corelibs-foundation's property-list reader repairs text it cannot
/// represent instead of refusing it: a UTF-16 string with a lone or reversed
/// surrogate comes back with U+FFFD in its place, and an "ASCII" string with
/// bytes over 0x7F is read as Latin-1. Either way the memo would be rendered
/// with text the producer did not write, and nothing after the reader can tell
/// a repaired U+FFFD from a real one. So the strings are judged here, from the
/// object table, the same table the reader walks. (An XML property list needs
/// no such check: its reader refuses invalid UTF-8 and unpaired surrogate
/// references outright.)
struct BinaryPlistText {
    let bytes: [UInt8]

    static let magic = Array("bplist".utf8)

    /// Throws the refusal for the first string that is not exactly representable,
    /// or for an object table it cannot read (the reader would not agree on it).
    func check() throws(KeyedStructure.Refusal) {
        guard bytes.count >= 40, Array(bytes.prefix(6)) == BinaryPlistText.magic else { return }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let objectCount = number(at: trailer + 8, size: 8)
        let tableOffset = number(at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), let objectCount, let tableOffset,
              objectCount <= UInt64(bytes.count), tableOffset <= UInt64(trailer),
              objectCount * UInt64(offsetSize) <= UInt64(trailer) - tableOffset else {
            throw unreadable("trailer")
        }
        for index in 0..<Int(objectCount) {
            guard let offset = number(at: Int(tableOffset) + index * offsetSize, size: offsetSize),
                  offset < UInt64(trailer) else {
                throw unreadable("object \(index)'s offset")
            }
            try checkObject(at: Int(offset), index: index)
        }
    }

    private func checkObject(at offset: Int, index: Int) throws(KeyedStructure.Refusal) {
        let marker = bytes[offset]
        let kind = marker >> 4
        guard kind == 0x5 || kind == 0x6 || kind == 0x7 else { return }
        guard let (count, start) = length(marker, at: offset) else { throw unreadable("object \(index)'s length") }
        let unitSize = kind == 0x6 ? 2 : 1
        let (size, overflow) = count.multipliedReportingOverflow(by: unitSize)
        guard !overflow, start <= bytes.count - 32, size <= bytes.count - 32 - start else {
            throw unreadable("object \(index), which runs past the object table")
        }
        let body = bytes[start..<start + size]
        switch kind {
        case 0x5:
            if let byte = body.first(where: { $0 > 0x7F }) {
                throw KeyedStructure.Refusal(.invalidField, "object \(index) is an ASCII string holding byte 0x\(String(byte, radix: 16))")
            }
        case 0x6:
            try checkUTF16(body, index: index)
        default:
            if UTF8Scalar.string(Array(body)) == nil {
                throw KeyedStructure.Refusal(.invalidField, "object \(index) is a UTF-8 string that is not valid UTF-8")
            }
        }
    }

    /// Big-endian UTF-16: every high surrogate followed by a low one, no low one alone.
    private func checkUTF16(_ body: ArraySlice<UInt8>, index: Int) throws(KeyedStructure.Refusal) {
        func lone(_ unit: UInt16) -> KeyedStructure.Refusal {
            KeyedStructure.Refusal(.invalidField, "object \(index) is text holding a lone UTF-16 surrogate 0x\(String(unit, radix: 16))")
        }
        var pendingHigh: UInt16?
        var position = body.startIndex
        while position < body.endIndex {
            let unit = UInt16(body[position]) << 8 | UInt16(body[position + 1])
            position += 2
            let isLow = (0xDC00...0xDFFF).contains(unit)
            if let high = pendingHigh, !isLow { throw lone(high) }
            if pendingHigh == nil && isLow { throw lone(unit) }
            pendingHigh = pendingHigh == nil && (0xD800...0xDBFF).contains(unit) ? unit : nil
        }
        if let high = pendingHigh { throw lone(high) }
    }

    /// A string's length from its marker's low nibble, or from the integer object
    /// after it when the nibble is 0xF; and where its body starts.
    private func length(_ marker: UInt8, at offset: Int) -> (Int, Int)? {
        guard marker & 0x0F == 0x0F else { return (Int(marker & 0x0F), offset + 1) }
        guard offset + 1 < bytes.count, bytes[offset + 1] >> 4 == 0x1 else { return nil }
        let size = 1 << Int(bytes[offset + 1] & 0x0F)
        guard size <= 8, let value = number(at: offset + 2, size: size), value <= UInt64(Int32.max) else { return nil }
        return (Int(value), offset + 2 + size)
    }

    private func number(at offset: Int, size: Int) -> UInt64? {
        guard offset >= 0, size <= 8, offset <= bytes.count - size else { return nil }
        return bytes[offset..<offset + size].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    private func unreadable(_ what: String) -> KeyedStructure.Refusal {
        KeyedStructure.Refusal(.corruptArchive, "the binary property list's \(what) cannot be read")
    }
}
