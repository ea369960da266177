import AirlockConfiguration
import AirlockIntake
import AirlockPolicy
import AirlockTestSupport
import Foundation
import Testing

@Suite("Content policy: MIME patterns, the mime.types table, precedence, clamd replies, the profiles")
struct ContentPolicyTests {
    static let table = ExtensionTypes(text: (try? String(contentsOfFile: "/etc/mime.types", encoding: .utf8)) ?? "")

    @Test("patterns are type/subtype, type/* or */*, lowercase; anything else is refused",
          arguments: ["image/*", "application/pdf", "*/*", "application/vnd.ms-excel", "text/x-c++"])
    func wellFormedPatterns(_ text: String) {
        expect(MediaPattern(text) != nil)
    }

    @Test("malformed patterns are refused", arguments: ["Image/PNG", "image", "*/png", "image/", "/png", "image/*/x", "image/p ng", ""])
    func malformedPatterns(_ text: String) {
        expectEqual(MediaPattern(text), nil)
    }

    @Test("a wildcard matches its top-level type only")
    func wildcard() {
        let images = MediaPattern("image/*")!
        expect(images.matches("image/png") && !images.matches("imagex/png") && !images.matches("application/x-image"))
        expect(MediaPattern("*/*")!.matches("text/plain"))
    }

    @Test("mime.types is the extension table: pdf, png, txt and csv name their types", .enabled(if: !table.table.isEmpty, "needs /etc/mime.types (package media-types)"))
    func systemTable() {
        expectEqual(ContentPolicyTests.table.types(forName: "docs/Report.PDF")?.1, ["application/pdf"])
        expectEqual(ContentPolicyTests.table.types(forName: "a.png")?.1, ["image/png"])
        expect(ContentPolicyTests.table.types(forName: "no-extension") == nil)
        expect(ContentPolicyTests.table.types(forName: ".hidden") == nil)
    }

    @Test("contradiction: exact, x- and top-level aliases and text/plain for text agree; the rest contradicts")
    func contradiction() {
        expect(!ExtensionTypes.contradicts("application/pdf", ["application/pdf"]))
        expect(!ExtensionTypes.contradicts("text/xml", ["application/xml"]))
        expect(!ExtensionTypes.contradicts("text/plain", ["text/csv"]))
        expect(!ExtensionTypes.contradicts("application/x-empty", ["image/png"]))
        expect(ExtensionTypes.contradicts("text/html", ["application/pdf"]))
        expect(ExtensionTypes.contradicts("text/plain", ["application/pdf"]))
        expect(ExtensionTypes.contradicts("application/x-sharedlib", ["image/jpeg"]))
    }

    @Test("the verdict does not depend on file order: deny before allow before mismatch, then the first name in byte order")
    func orderIndependence() {
        var policy = ContentPolicy()
        policy.deny = [MediaPattern("application/x-sharedlib")!]
        policy.allow = [MediaPattern("image/*")!, MediaPattern("application/x-sharedlib")!, MediaPattern("text/html")!]
        policy.extensionTypes = ExtensionTypes(text: "image/png png\napplication/pdf pdf\n")
        let files: [(entry: String, type: String)] = [("b.pdf", "text/html"), ("z", "application/x-sharedlib"), ("c.txt", "text/plain"),
                                                       ("a.png", "image/gif"), ("y", "application/x-sharedlib")]
        for rotation in 0..<files.count {
            let order = Array(files[rotation...] + files[..<rotation])
            for list in [order, order.reversed()] {
                let worst = policy.judge(list)
                expect(worst?.reason == .disallowedType && worst?.entry == Array("c.txt".utf8), "\(String(describing: worst))")
            }
        }
        policy.allow = []
        policy.deny = []
        let mismatch = policy.judge(files)
        expect(mismatch?.reason == .typeMismatch && mismatch?.entry == Array("a.png".utf8))
        expect(Reason.disallowedType.precedence > Reason.ratioTooHigh.precedence)
        expect(Reason.typeMismatch.precedence > Reason.disallowedType.precedence)
    }

    @Test("clamd's FILDES replies: OK, a signature FOUND, and anything else is a failure")
    func clamdReplies() throws {
        try expectEqual(ClamdClient.parse("fd[10]: OK"), .clean)
        try expectEqual(ClamdClient.parse("fd[10]: Win.Test.EICAR_HDB-1 FOUND"), .found(signature: "Win.Test.EICAR_HDB-1"))
        for reply in ["fd[10]: lstat() failed: No such file. ERROR", "COMMAND READ TIMED OUT", "fd[10]:  FOUND", ""] {
            #expect(throws: ClamdFailure.self) { try ClamdClient.parse(reply) }
        }
    }

    @Test("the types a child writes are read back sorted; a malformed type makes the whole list unbelievable")
    func detectedTypesRoundTrip() {
        let accepted = VerdictMessage.Outcome.accepted(.init(files: 2, directories: 1, entries: 3, bytesWritten: 10))
        let json = VerdictMessage(accepted, types: [DetectedType(entry: "z/b.txt", type: "text/plain"),
                                                    DetectedType(entry: "a \"q\".png", type: "image/png")])
        let parsed = DetectedTypes.parse(Array(json.jsonText.utf8))
        expect(parsed?.map(\.entry) == ["a \"q\".png", "z/b.txt"] && parsed?.map(\.type) == ["image/png", "text/plain"])
        let bad = VerdictMessage(accepted, types: [DetectedType(entry: "a", type: "Text/Plain; charset=x")])
        expect(DetectedTypes.parse(Array(bad.jsonText.utf8)) == nil)
    }

    @Test("the example profiles in etc/ decode strictly", arguments: ["content-documents.json", "content-images.json", "content-no-executables.json"])
    func profiles(_ name: String) throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("etc").appendingPathComponent(name)
        let configuration = try Configuration(json: Data(contentsOf: url))
        let denied: Set<ContentClass> = name == "content-no-executables.json" ? [.executable, .script, .macroDocument]
            : [.executable, .script, .macroDocument, .activeContent]
        expectEqual(configuration.content.policy.denyClasses, denied)
        // no-executables judges by class alone, so libmagic does not run for it.
        expectEqual(configuration.content.runsLibmagic, (name != "content-no-executables.json"))
    }
}
