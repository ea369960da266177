@testable import AirlockChild
import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("A file a browser opens as a page or as markup by its name is judged so, whatever its head")
struct MarkupNamesTests {
    @Test("a handler or script URL after text counts in .html, .svg and .xml files, not in .txt; any .html file is a page")
    func byName() {
        let handler = Array("Hi <img src=x onerror=\"alert(1)\">".utf8)
        let link = Array("Hi <a href=\"javascript:alert(1)\">x</a>".utf8)
        let cases: [(String, [UInt8], Bool)] = [
            ("page.html", handler, true), ("site/Page.HTM. ", handler, true), ("page.xhtml", handler, true),
            ("text.svg", link, true), ("data.xml", link, true), ("readme.html", Array("hello".utf8), true),
            ("notes.txt", handler, false), ("notes.txt", link, false), ("data.xml", Array("hello".utf8), false),
            ("page.html.txt", handler, false), ("html", handler, false),
        ]
        for (name, bytes, active) in cases {
            for chunk in [1, 7, 4096] {
                let classes = ContentClasses.of(name: Array(name.utf8), bytes: bytes, chunkSize: chunk)
                expectEqual(classes.contains(.activeContent), active, "\(name): \(String(decoding: bytes, as: UTF8.self)), chunks of \(chunk)")
            }
        }
    }
}
