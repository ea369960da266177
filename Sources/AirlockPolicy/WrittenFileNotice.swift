/// A line a decoder child writes to its result pipe, ahead of its verdict, each
/// time it has closed a large file in staging: `{"written":"<hex of the path>"}`.
///
/// It lets the supervisor hash that file while the child goes on decoding,
/// rather than after it exits. It is a hint and nothing more: the supervisor
/// trusts neither the path (it opens it beneath staging, refusing symbolic
/// links, like any other name) nor that the file is finished (it hashes only a
/// file it holds a read lease on, and uses the hash only if that lease still
/// stands once the child is gone). A child that lies costs itself the head start.
public enum WrittenFileNotice {
    /// Files smaller than this are hashed after the child exits with the rest:
    /// below it the notice, the open and the lease cost more than the overlap saves.
    public static let minimumBytes: Int64 = 1 << 20

    public static let prefix = Array(#"{"written":""#.utf8)

    /// The notice for `path` (staging-relative, components joined by "/"), newline included.
    public static func line(for path: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var line = prefix
        line.reserveCapacity(prefix.count + path.count * 2 + 3)
        for byte in path {
            line.append(digits[Int(byte >> 4)])
            line.append(digits[Int(byte & 0x0F)])
        }
        line += Array("\"}\n".utf8)
        return line
    }

    /// The path a notice line (without its newline) names; nil when it is not
    /// exactly one notice with an even run of lower-case hex digits.
    public static func path(in line: ArraySlice<UInt8>) -> [UInt8]? {
        guard line.starts(with: prefix), line.count >= prefix.count + 2,
              line.suffix(2).elementsEqual(Array("\"}".utf8)) else { return nil }
        let digits = line.dropFirst(prefix.count).dropLast(2)
        guard digits.count % 2 == 0 else { return nil }
        var path: [UInt8] = []
        path.reserveCapacity(digits.count / 2)
        var high: UInt8?
        for character in digits {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                path.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return path
    }
}
