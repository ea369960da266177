import AirlockTestSupport
import Foundation
import Testing

@Suite("The human log: one line per event, with journald priorities under systemd")
struct LogTests {
    /// Runs airlock with JOURNAL_STREAM naming its own standard error, as systemd
    /// sets it for a service whose output goes to the journal.
    func underJournal(_ arguments: [String]) throws -> Outcome {
        try airlock(arguments, under: ["/bin/sh", "-c", #"JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@""#])
    }

    @Test("each line starts with its sd-daemon priority when stderr is the journal")
    func priorities() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        let run = try underJournal(["run", "--once", "--root", sandbox.root.path])
        expectEqual(run.status, 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        expect(!lines.isEmpty)
        for line in lines { expect(line.hasPrefix("<6>airlock: "), "\(line)") }
        expect(lines.contains { $0.hasPrefix("<6>airlock: accepted photos.zip") })
        expect(!run.stdout.contains("<6>"), "events on stdout carry no prefix")
        let usage = try underJournal(["frobnicate"])
        expect(usage.stderr.hasPrefix("<3>airlock: error: unknown command"), "\(usage.stderr)")
        try FileManager.default.removeItem(at: sandbox.inbox)
        let broken = try underJournal(["run", "--once", "--root", sandbox.root.path])
        expect(broken.stderr.split(separator: "\n").allSatisfy { $0.hasPrefix("<3>") || $0.hasPrefix("<4>") || $0.hasPrefix("<6>") },
                "\(broken.stderr)")
        expect(broken.stderr.contains("<3>airlock: error:"), "\(broken.stderr)")
    }

    @Test("without the journal, or with a JOURNAL_STREAM that is not stderr, lines carry no prefix")
    func noJournal() throws {
        for environment in [[:], ["JOURNAL_STREAM": "1:2"]] {
            let result = try airlock(["frobnicate"], environment: environment)
            expect(result.stderr.hasPrefix("airlock: error: unknown command"), "\(environment): \(result.stderr)")
        }
    }
}
