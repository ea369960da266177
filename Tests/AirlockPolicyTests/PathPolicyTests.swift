import AirlockPolicy
import AirlockTestSupport
import Testing

@Suite("Path policy: check-path's rule for entry names")
struct PathPolicyTests {
    let policy = Policy()

    func verdict(_ name: [UInt8]) -> Reason? {
        do {
            _ = try EntryPath(validating: name, policy: policy)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("the documented good names pass", arguments: ["docs/readme.txt", "docs/", "report..txt", "a", "..a/b..", "café/naïve.txt", "a b/c-d_e.f"])
    func accepted(_ name: String) {
        expectEqual(verdict(Array(name.utf8)), nil)
    }

    @Test("the documented bad names are unsafe paths", arguments: [
        "../outside.txt", "docs/../../outside.txt", "/tmp/outside.txt", "docs//readme.txt", "docs/./readme.txt",
        "docs\\..\\outside.txt", "C:/outside.txt", "", ".", "..", "./", "docs//", "/", "docs/..", "a\\b", "stream:name",
    ])
    func rejected(_ name: String) {
        expectEqual(verdict(Array(name.utf8)), .unsafePath)
    }

    @Test("a NUL byte anywhere is an unsafe path")
    func nul() {
        expectEqual(verdict(Array("docs/a".utf8) + [0] + Array("b.txt".utf8)), .unsafePath)
    }

    @Test("control characters, C0, DEL and C1, are unsafe", arguments: [UInt32(1), 0x0A, 0x1B, 0x7F, 0x85, 0x9F])
    func control(_ scalar: UInt32) {
        var name = "docs/a"
        name.unicodeScalars.append(Unicode.Scalar(scalar)!)
        expectEqual(verdict(Array(name.utf8)), .unsafePath)
    }

    @Test("invalid UTF-8 is unsafe: stray, overlong, surrogate, beyond U+10FFFF", arguments: [
        [UInt8(0xFF)], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3],
    ])
    func invalidUTF8(_ bytes: [UInt8]) {
        expectEqual(verdict(Array("docs/".utf8) + bytes), .unsafePath)
    }

    @Test("a component of 255 bytes passes and of 256 is too long")
    func componentLength() {
        expectEqual(verdict(Array(repeating: UInt8(ascii: "a"), count: 255)), nil)
        expectEqual(verdict(Array(repeating: UInt8(ascii: "a"), count: 256)), .nameTooLong)
    }

    @Test("a path of 1024 bytes passes and of 1025 is too long")
    func pathLength() {
        let component = Array(repeating: UInt8(ascii: "a"), count: 99)
        var path: [UInt8] = []
        while path.count + 100 <= 1024 { path += component + [UInt8(ascii: "/")] }
        let exact = path + Array(repeating: UInt8(ascii: "b"), count: 1024 - path.count)
        expectEqual(exact.count, 1024)
        expectEqual(verdict(exact), nil)
        expectEqual(verdict(exact + [UInt8(ascii: "c")]), .nameTooLong)
        expectEqual(verdict(exact + [UInt8(ascii: "/")]), nil, "a directory's trailing slash does not count")
    }

    @Test("32 levels pass and 33 are too deep")
    func depth() {
        let level = { (n: Int) in Array(Array(repeating: "d", count: n).joined(separator: "/").utf8) }
        expectEqual(verdict(level(32)), nil)
        expectEqual(verdict(level(33)), .tooDeep)
    }

    @Test("limits follow the policy")
    func configurable() {
        var small = Policy()
        small.maxDepth = 2
        small.maxComponentBytes = 3
        #expect(throws: PathViolation.self) { try EntryPath(validating: Array("a/b/c".utf8), policy: small) }
        #expect(throws: PathViolation.self) { try EntryPath(validating: Array("abcd".utf8), policy: small) }
        #expect(throws: Never.self) { try EntryPath(validating: Array("abc/d".utf8), policy: small) }
    }

    @Test("a single trailing slash marks a directory and is kept apart from the components")
    func trailingSlash() throws {
        let path = try EntryPath(validating: Array("docs/sub/".utf8), policy: policy)
        expect(path.hasTrailingSlash)
        expectEqual(path.components, [Array("docs".utf8), Array("sub".utf8)])
    }
}
