import AirlockChild
import AirlockPolicy
import AirlockTestSupport
import Foundation
import Testing

/// One case of the evasion corpus (fixtures/classes/cases.json, written by make_classes.py).
struct ClassCase: Sendable, CustomStringConvertible {
    let file: String
    let what: String
    let classes: Set<ContentClass>

    var description: String { "\(file): \(what)" }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/classes")

    static let all: [ClassCase] = {
        struct Row: Decodable {
            let file: String
            let what: String
            let classes: [String]
            enum CodingKeys: String, CodingKey { case file, classes, what = "case" }
        }
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("cases.json")),
              let rows = try? JSONDecoder().decode([Row].self, from: data) else { return [] }
        return rows.map { row in
            ClassCase(file: row.file, what: row.what, classes: Set(row.classes.map { ContentClass(rawValue: $0)! }))
        }
    }()

    var bytes: [UInt8] { (try? [UInt8](Data(contentsOf: ClassCase.directory.appendingPathComponent("files/" + file)))) ?? [] }
}

@Suite("Content classes: decided by structure, streamed, the same whatever the chunks")
struct ContentClassTests {
    @Test("the corpus is there and covers every class")
    func corpus() {
        expect(ClassCase.all.count >= 50)
        expectEqual(Set(ClassCase.all.flatMap(\.classes)), Set(ContentClass.allCases))
        expect(ClassCase.all.allSatisfy { !$0.bytes.isEmpty })
    }

    @Test("every evasion case gets exactly the classes it must", arguments: ClassCase.all)
    func evasion(_ item: ClassCase) {
        expectEqual(ContentClasses.of(name: Array(item.file.utf8), bytes: item.bytes), item.classes)
    }

    @Test("chunk boundaries change nothing: the same classes fed 1, 7 and 4093 bytes at a time", arguments: ClassCase.all)
    func chunked(_ item: ClassCase) {
        for size in [1, 7, 4093] {
            expectEqual(ContentClasses.of(name: Array(item.file.utf8), bytes: item.bytes, chunkSize: size), item.classes, "chunks of \(size)")
        }
    }

    @Test("plain files a person would call harmless get no class")
    func harmless() {
        let samples: [(String, [UInt8])] = [
            ("empty.txt", []),
            ("notes.md", Array("# Notes\n\nUse `x = 1` and see https://example.org/ for more; one=two.\n".utf8)),
            ("data.csv", Array("name,onload,score\nalice,1,2\n".utf8)),
            ("config.xml", Array("<?xml version=\"1.0\"?><config><item name=\"a\" value=\"b\"/></config>\n".utf8)),
            ("random.bin", (0..<65536).map { UInt8(truncatingIfNeeded: ($0 &* 2654435761) >> 13) }),
            ("README", Array("MAKE sure to read this. Mz is not a header when it is text?\n".utf8)),
        ]
        for (name, bytes) in samples {
            expect(ContentClasses.of(name: Array(name.utf8), bytes: bytes).isEmpty, "\(name)")
        }
    }

    @Test("the class table is the one the manifest and the configuration name, in that order")
    func names() {
        expectEqual(ContentClass.allCases.map(\.rawValue), ["executable", "script", "active-content", "macro-document", "archive"])
        expectEqual(ContentClass.text([.archive, .executable]), "executable archive")
        expectEqual(ContentClass.parse("executable archive"), [.executable, .archive])
        expect(ContentClass.parse("executable executable") == nil && ContentClass.parse("program") == nil)
    }

    @Test("a Windows Script Host call is found wherever it sits in the head, and not past it")
    func scriptCallPositions() {
        for padding in 0..<20 {
            for call in ["WScript.Echo 1", "x = CreateObject(\"a\")", "Invoke-Expression $x", "powershell -EncodedCommand AA"] {
                let text = Array((String(repeating: "x", count: padding) + " " + call + "\n").utf8)
                expectEqual(ContentClasses.of(name: Array("notes.txt".utf8), bytes: text), [.script], "\(padding): \(call)")
            }
        }
        let late = Array((String(repeating: "words ", count: 1000) + "WScript.Echo 1\n").utf8)
        expect(ContentClasses.of(name: Array("notes.txt".utf8), bytes: late).isEmpty, "the head is the first 4 KiB")
    }
}
