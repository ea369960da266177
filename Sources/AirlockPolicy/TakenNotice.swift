/// The line a decoder child writes to its result pipe once it holds the drop,
/// is confined, and is about to read the drop's first byte:
/// `{"taken":V}` and a newline, where V is the version of the verdict it will write.
///
/// It draws the line between a fault of the machinery and a verdict on the
/// drop. A child that never says it (it was not started, not handed the drop,
/// never given its go-ahead, refused the request's version, could not confine
/// itself, or died on the way) has judged nothing: whatever its exit status,
/// the drop is deferred and retried with a fresh child. Only a child that said
/// it can reject a drop, `decoder-failed` (its own crash or limits) included.
/// A taken line naming another verdict version defers too: the supervisor and
/// the decoder programs on disk come from different builds.
public enum TakenNotice {
    public static let prefix = Array(#"{"taken":"#.utf8)

    /// The notice for this build's verdict version, newline included.
    public static var line: [UInt8] {
        prefix + Array("\(VerdictMessage.currentVersion)}\n".utf8)
    }

    /// The verdict version a notice line (without its newline) names; nil when
    /// it is not exactly one notice with a decimal version.
    public static func version(in line: ArraySlice<UInt8>) -> Int64? {
        noticeNumber(in: line, after: prefix)
    }
}

/// The number of a one-number notice line (without its newline): `prefix`, 1
/// to 18 decimal digits and `}`; nil for anything else.
func noticeNumber(in line: ArraySlice<UInt8>, after prefix: [UInt8]) -> Int64? {
    guard line.starts(with: prefix), line.last == UInt8(ascii: "}") else { return nil }
    let digits = line.dropFirst(prefix.count).dropLast()
    guard (1...18).contains(digits.count), digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
        return nil
    }
    return digits.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
}
