@testable import AirlockIntake
import AirlockPolicy
@testable import AirlockQuarantine
import AirlockTestSupport
import Testing

@Suite("Free names: the numbered candidates fit a directory entry and stay whole UTF-8")
struct NameCandidateTests {
    /// Stems of every length near the limit, in 1-, 2-, 3- and 4-byte characters at every alignment.
    static let stems: [String] = {
        var result: [String] = []
        for character in ["a", "é", "€", "😀"] {
            for pad in 0..<4 {
                let unit = character.utf8.count
                result.append(String(repeating: "x", count: pad) + String(repeating: character, count: (255 - pad) / unit))
            }
        }
        return result
    }()

    @Test("every candidate fits in 255 bytes, is valid UTF-8, passes the path policy and is distinct", arguments: stems)
    func candidates(_ stem: String) throws {
        for suffix in ["", ".zip", ".tar.zst", ".ZIP"] {
            let (base, kept) = NameCandidates.split(Array(stem.utf8) + Array(suffix.utf8))
            expectEqual(kept, Array(suffix.utf8))
            let names = NameCandidates.candidates(stem: base, suffix: kept)
            expectEqual(names.count, 999)
            expectEqual(Set(names).count, names.count)
            for (index, name) in names.enumerated() {
                expect(name.count <= NameCandidates.maxNameBytes, "\(name.count) bytes")
                let text = String(validating: name, as: UTF8.self)
                expect(text != nil, "candidate \(index + 1) splits a UTF-8 sequence")
                expectEqual(Array(name.suffix(kept.count)), kept)
                if index > 0 { expectEqual(text?.hasSuffix("-\(index + 1)" + suffix), true) }
                expect((try? EntryPath(validating: name, policy: Policy())) != nil)
            }
        }
    }

    @Test("names that fit are kept as they are")
    func shortNames() {
        expectEqual(NameCandidates.candidates(stem: Array("photos".utf8), suffix: Array(".zip".utf8)).prefix(3).map { String(decoding: $0, as: UTF8.self) }, ["photos.zip", "photos-2.zip", "photos-3.zip"])
    }
}

extension NameCandidateTests {
    @Test("a stem is cut by no more than the sequence it would split")
    func minimalCut() {
        let stem = Array(String(repeating: "😀", count: 63).utf8) + Array("abc".utf8)  // 255 bytes
        let second = NameCandidates.candidates(stem: stem, suffix: [])[1]
        // 253 bytes of room: the 63 emoji (252 bytes) and one 'a'.
        expectEqual(second, Array(String(repeating: "😀", count: 63).utf8) + Array("a-2".utf8))
        let emoji = Array(String(repeating: "😀", count: 64).utf8)  // 256 bytes, cut to 252 first
        expectEqual(NameCandidates.candidates(stem: emoji, suffix: [])[0].count, 252)
    }
}

@Suite("Archive suffixes: one function strips them for outbox and release names")
struct ArchiveSuffixTests {
    static let cases: [(name: String, stem: String, suffix: String)] = [
        ("logs.tar.gz", "logs", ".tar.gz"), ("logs.TAR.GZ", "logs", ".TAR.GZ"), ("logs.tgz", "logs", ".tgz"),
        ("logs.tar", "logs", ".tar"), ("logs.tar.zst", "logs", ".tar.zst"), ("logs.tar.lzma", "logs", ".tar.lzma"),
        ("photos.zip", "photos", ".zip"), ("a.b.7z", "a.b", ".7z"), ("memo.plist", "memo", ".plist"),
        ("notes.txt", "notes.txt", ""), ("archive.gz", "archive.gz", ""), (".zip", ".zip", ""), ("zip", "zip", ""),
        ("x.zip.tar", "x.zip", ".tar"),
    ]

    @Test("the longest suffix is stripped as spelled; a name that is only a suffix keeps it", arguments: cases)
    func split(_ item: (name: String, stem: String, suffix: String)) {
        let (stem, suffix) = NameCandidates.split(Array(item.name.utf8))
        expectEqual(stem, Array(item.stem.utf8))
        expectEqual(suffix, Array(item.suffix.utf8))
    }

    @Test("the outbox name and a release back into the inbox strip the same suffix", arguments: cases)
    func sameForBoth(_ item: (name: String, stem: String, suffix: String)) {
        let name = Array(item.name.utf8)
        let released = QuarantineDesk.inboxCandidates(name)
        expectEqual(released[0], name)
        expectEqual(released[1], Array(item.stem.utf8) + Array("-2".utf8) + Array(item.suffix.utf8))
        guard item.stem.first != "." else { return }
        expectEqual(OutboxName.base(for: name, id: "id", policy: Policy()), Array(item.stem.utf8))
    }
}
