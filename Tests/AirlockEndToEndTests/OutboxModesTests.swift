import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Outbox entries get the configured modes whatever the umask and whatever the decoder wrote")
struct OutboxModesTests {
    @Test("under umask 077 every directory of an entry is 0750 and every file 0640", arguments: ["syncfs", "fsync"])
    func modesWhateverTheUmask(_ sync: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.configure("outbox", ["file_mode": "0640", "directory_mode": "0750"])
        try sandbox.configure("commit", ["sync": sync])
        try sandbox.drop(Data(contentsOf: Binary.repository.appendingPathComponent("fixtures/archives/zip-deflate-valid.zip")), as: "a.zip")
        let result = try airlock(["run", "--once", "--root", sandbox.root.path],
                                 under: ["/bin/sh", "-c", #"umask 077; exec "$0" "$@""#])
        expectEqual(result.status, 0, "\(result.stderr)")
        let entry = sandbox.outbox.appendingPathComponent("a")
        let paths = [entry.path] + (try FileManager.default.subpathsOfDirectory(atPath: entry.path)).map { entry.path + "/" + $0 }
        expect(paths.count > 2)
        for path in paths {
            var st = stat()
            try #require(lstat(path, &st) == 0)
            let directory = st.st_mode & S_IFMT == S_IFDIR
            expectEqual(st.st_mode & 0o7777, (directory ? 0o750 : 0o640), "\(path): \(String(st.st_mode & 0o7777, radix: 8))")
        }
        try sandbox.expectInvariants()
    }
}
