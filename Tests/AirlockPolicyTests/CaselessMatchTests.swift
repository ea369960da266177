import AirlockPolicy
import AirlockTestSupport
import Foundation
import Testing

/// Python's answers for every code point: its full case folding (`str.casefold`),
/// its NFD, and the canonical caseless key NFD(casefold(NFD(c))), listed where one
/// of them is not the code point itself; and the ranges its Unicode database
/// leaves unassigned.
struct PythonUnicode {
    var fold: [UInt32: [UInt32]] = [:]
    var nfd: [UInt32: [UInt32]] = [:]
    var key: [UInt32: [UInt32]] = [:]
    var unassigned: [ClosedRange<UInt32>] = []
    var version = ""

    static let script = """
    import sys, unicodedata
    def h(s): return " ".join("%X" % ord(c) for c in s)
    out = ["V " + unicodedata.unidata_version]
    start = None
    for cp in range(0x110000):
        c = chr(cp)
        if unicodedata.category(c) == "Cn":
            start = cp if start is None else start
            continue
        if start is not None:
            out.append("U %X %X" % (start, cp - 1)); start = None
        if 0xD800 <= cp <= 0xDFFF:
            continue
        f, d = c.casefold(), unicodedata.normalize("NFD", c)
        k = unicodedata.normalize("NFD", unicodedata.normalize("NFD", c).casefold())
        if f != c or d != c or k != c:
            out.append("C %X;%s;%s;%s" % (cp, h(f), h(d), h(k)))
    if start is not None:
        out.append("U %X %X" % (start, 0x10FFFF))
    sys.stdout.write("\\n".join(out) + "\\n")
    """

    static func load() throws -> PythonUnicode {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
        var result = PythonUnicode()
        func scalars(_ text: Substring) -> [UInt32] { text.split(separator: " ").map { UInt32($0, radix: 16)! } }
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let body = line.dropFirst(2)
            switch line.first {
            case "V": result.version = String(body)
            case "U":
                let bounds = scalars(body)
                result.unassigned.append(bounds[0]...bounds[1])
            default:
                let fields = body.split(separator: ";", omittingEmptySubsequences: false)
                let code = UInt32(fields[0], radix: 16)!
                result.fold[code] = scalars(fields[1])
                result.nfd[code] = scalars(fields[2])
                result.key[code] = scalars(fields[3])
            }
        }
        return result
    }

    /// The code points Python's Unicode database assigns, surrogates left out, as
    /// ascending ranges: the complement of `unassigned`, which it lists in order.
    var assigned: [ClosedRange<UInt32>] {
        var ranges: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for gap in unassigned + [0x110000...0x110000] {
            if gap.lowerBound > next { ranges.append(next...gap.lowerBound - 1) }
            next = max(next, gap.upperBound + 1)
        }
        return ranges.flatMap { range -> [ClosedRange<UInt32>] in
            guard range.overlaps(0xD800...0xDFFF) else { return [range] }
            return [range.lowerBound..<0xD800, 0xE000..<range.upperBound + 1].compactMap { $0.isEmpty ? nil : ClosedRange($0) }
        }
    }
}

@Suite("Canonical caseless match: the generated tables agree with Python for every code point")
struct CaselessMatchTests {
    static let python = Result { try PythonUnicode.load() }

    /// Every scalar whose answer differs from Python's, except code points Python's
    /// (possibly older) Unicode database does not assign yet: those are not asked
    /// at all (about 830,000 of the 1.1 million, whose answers could only be
    /// ignored; asking them cost three quarters of the suite's time).
    func disagreements(_ ours: ([UInt32]) -> [UInt32], _ theirs: KeyPath<PythonUnicode, [UInt32: [UInt32]]>) throws -> [String] {
        let python = try CaselessMatchTests.python.get()
        expect(python.fold.count > 1400 && python.nfd.count > 13000, "Python's answers did not arrive")
        let assigned = python.assigned
        expect(assigned.reduce(0) { $0 + $1.count } > 270_000, "Python's database assigns too few code points: \(assigned.count) ranges")
        var wrong: [String] = []
        let answers = python[keyPath: theirs]
        for range in assigned {
            for code in range {
                let expected = answers[code] ?? [code]
                if ours([code]) != expected { wrong.append(String(code, radix: 16)) }
            }
        }
        return wrong
    }

    @Test("full case folding equals Python's str.casefold() for every code point")
    func caseFolding() throws {
        let wrong = try disagreements(CaselessMatch.caseFolding, \.fold)
        expect(wrong.isEmpty, "\(wrong.count) code points fold differently, first \(wrong.prefix(10))")
    }

    @Test("NFD equals Python's unicodedata.normalize('NFD') for every code point")
    func decomposition() throws {
        let wrong = try disagreements(CaselessMatch.canonicalDecomposition, \.nfd)
        expect(wrong.isEmpty, "\(wrong.count) code points decompose differently, first \(wrong.prefix(10))")
    }

    @Test("the caseless key equals Python's NFD(casefold(NFD(c))) for every code point")
    func caselessKey() throws {
        let key: ([UInt32]) -> [UInt32] = { scalars in
            let text = String(String.UnicodeScalarView(scalars.map { Unicode.Scalar($0)! }))
            return String(decoding: CaselessMatch.key(text), as: UTF8.self).unicodeScalars.map(\.value)
        }
        let wrong = try disagreements(key, \.key)
        expect(wrong.isEmpty, "\(wrong.count) code points key differently, first \(wrong.prefix(10))")
    }

    @Test("strings: marks out of canonical order, Hangul, sharp s and ASCII")
    func strings() {
        func key(_ text: String) -> String { String(decoding: CaselessMatch.key(text), as: UTF8.self) }
        expectEqual(key("\u{3B1}\u{345}\u{301}"), key("\u{3B1}\u{301}\u{345}"))
        expectEqual(key("\u{3B1}\u{301}\u{345}").unicodeScalars.map(\.value), [0x3B1, 0x301, 0x3B9])
        expect(key("ẞ") == "ss" && key("ß") == "ss" && key("SS") == "ss")
        expectEqual(key("\u{D55C}").unicodeScalars.map(\.value), [0x1112, 0x1161, 0x11AB])
        expectEqual(key("README.TXT"), "readme.txt")
        expectEqual(key("caf\u{E9}"), key("CAFE\u{301}"))
        expect(key("ı") != key("i"), "dotless i is not folded to i outside the Turkic rules")
    }
}
