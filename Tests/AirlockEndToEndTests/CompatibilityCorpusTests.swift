import AirlockTestSupport
import Foundation
import Testing

extension FixtureCase {
    /// fixtures/compat: archives written by the real tools, the expected trees being what bsdtar extracts.
    static let compatibility: [FixtureCase] = load("fixtures/compat")
}

@Suite("Compatibility corpus: what the real archivers write is accepted byte-exact, with the invariants intact")
struct CompatibilityCorpusTests {
    /// The writers the corpus must hold at least one archive from (the manifest's "tool" values).
    static let writers = ["GNU tar", "busybox tar", "bsdtar", "Info-ZIP zip", "7-Zip (p7zip-full)", "Python zipfile",
                          "Python shutil.make_archive", "OpenJDK jar", "Go archive/zip", "pigz", "pzstd", "lzip",
                          "xz-utils", "GNU gzip", "bzip2", "zstd"]

    @Test("the manifest covers every writer, and every archive on disk is in it")
    func manifestCoversWriters() throws {
        let cases = FixtureCase.compatibility
        let tools = Set(cases.compactMap(\.tool))
        for writer in Self.writers { expect(tools.contains(writer), "no archive written by \(writer)") }
        for item in cases {
            expect(item.tool != nil && item.format != nil, "\(item.name) does not say what wrote it")
            expect(FileManager.default.fileExists(atPath: item.fixture.path), "\(item.file) is missing")
            // Only archives every reader refuses may be expected to be rejected, or
            // those airlock refuses on purpose, each with the reason written down.
            expect(item.verdict == "accepted" || item.bsdtar == "refused" || !(item.departure ?? "").isEmpty,
                    "\(item.name) is valid but expected rejected")
            if item.departure != nil { expect(item.bsdtar == "accepted" && item.verdict == "rejected") }
            if item.verdict == "accepted" { expect(item.bsdtar == "accepted" && !item.files.isEmpty) }
        }
        let directory = Binary.repository.appendingPathComponent("fixtures/compat/archives")
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        expectEqual(onDisk, cases.map(\.file).sorted())
        expect(cases.filter { $0.verdict == "accepted" }.count >= 60)
    }

    /// One root and one `run --once` per policy the manifest names, each case's
    /// verdict checked on its own drop (every issue names the case).
    @Test("run --once accepts what bsdtar extracts, byte for byte, and no file gets a content class",
          arguments: PolicyBatch.of(FixtureCase.compatibility, policy: \.policy))
    func compatibilityCases(_ batch: PolicyBatch<FixtureCase>) throws {
        try expectCorpusVerdicts(batch, harmlessFiles: true)
    }
}
