import AirlockChild
@testable import AirlockDecoders
import AirlockSystem
import AirlockTestSupport
import Foundation
import Testing

@Suite("Decoder templates from the supervisor's side: a forked child is the supervisor's own, and a template that cannot serve gives none",
       .serialized)
struct TemplatePoolTests {
    /// Runs `--probe` through `templates`: the child, and what it wrote on its result pipe.
    func probe(_ templates: TemplatePool, _ executable: String) throws -> (ChildProcess?, String) {
        let nothing = try FileDescriptor.openDirectory(path: "/")
        defer { nothing.close() }
        let pipe = try makePipe()
        defer { pipe.read.close() }
        let child = pipe.write.closeAfter { result in
            templates.fork(executable, startUp: [], environment: [], arguments: DecoderPrograms.probe,
                           descriptors: [nothing, nothing, result])
        }
        guard let child else { return (nil, "") }
        return (child, String(decoding: try pipe.read.readAll(limit: 1 << 16), as: UTF8.self))
    }

    @Test("a forked child is this process's child, waited for through its pidfd; the template stays for the next, and stop ends it")
    func childIsOurs() throws {
        let templates = TemplatePool()
        defer { templates.stop() }
        let decoder = DecoderPrograms.decoder
        var templatePid: Int32?
        for _ in 0..<2 {
            let (forked, output) = try probe(templates, decoder)
            let child = try #require(forked)
            defer { child.close() }
            expectEqual(DecoderPrograms.parent(of: child.pid), CurrentProcess.id, "the supervisor's own child, not the template's")
            try expectEqual(child.wait().termination, .exited(0), "\(output)")
            expect(output.contains("\"limit_cpu\":"), "\(output)")
            let current = templates.templatePid(decoder, startUp: [])
            expect(current != nil && current != child.pid)
            expect(templatePid == nil || templatePid == current, "one template serves both")
            templatePid = current
        }
        let pid = try #require(templatePid)
        templates.stop()
        expect(!DecoderPrograms.exists(pid), "killed and reaped")
        try expect(probe(templates, decoder).0 == nil, "none after stop")
    }

    @Test("a successor starts before a template forks its last child, takes over after it, and one that died is not used")
    func successorTakesOver() throws {
        let templates = TemplatePool(maxChildren: 4, successorLead: 2)
        defer { templates.stop() }
        let decoder = DecoderPrograms.decoder
        var seen: [(template: Int32?, successor: Int32?)] = []
        for _ in 1...9 {
            let (forked, output) = try probe(templates, decoder)
            let child = try #require(forked)
            defer { child.close() }
            try expectEqual(child.wait().termination, .exited(0), "\(output)")
            seen.append((templates.templatePid(decoder, startUp: []), templates.successorPid(decoder, startUp: [])))
        }
        let first = try #require(seen[0].template)
        // Children 1-3 of the first template; its successor from the second on.
        expect(seen[0].successor == nil && seen[1].template == first && seen[2].template == first, "\(seen)")
        let second = try #require(seen[1].successor)
        expect(second != first && seen[2].successor == second, "\(seen)")
        // The fourth was the first's last: the successor serves from then on; the first, and later the second, were ended.
        expect(seen[3].template == second && seen[3].successor == nil && !DecoderPrograms.exists(first), "\(seen)")
        let third = try #require(seen[5].successor)
        expect(seen[4].successor == nil && third != second && seen[7].template == third && !DecoderPrograms.exists(second), "\(seen)")

        // A successor that dies while it waits is replaced by a fresh start, and no request fails.
        // The third's second child starts its successor.
        let (tenth, _) = try probe(templates, decoder)
        let tenthChild = try #require(tenth)
        defer { tenthChild.close() }
        _ = try tenthChild.wait()
        let waiting = try #require(templates.successorPid(decoder, startUp: []))
        expectEqual(kill(waiting, SIGKILL), 0)
        var after: [Int32?] = []
        for _ in 0..<4 {
            let (forked, output) = try probe(templates, decoder)
            let child = try #require(forked, "a dead successor cost a request its child")
            defer { child.close() }
            try expectEqual(child.wait().termination, .exited(0), "\(output)")
            after.append(templates.templatePid(decoder, startUp: []))
        }
        expect(!after.contains(waiting), "the dead successor served: \(after)")

        // A successor that stops answering while it waits (stopped here; a kill whose
        // exit is not seen yet when it takes over fails the same way) costs no
        // request its child: the failed first request is made again of a fresh template.
        var stopped: Int32?
        for _ in 0..<8 {
            if stopped == nil, let successor = templates.successorPid(decoder, startUp: []) {
                stopped = successor
                expectEqual(kill(successor, SIGSTOP), 0)
            }
            let (forked, output) = try probe(templates, decoder)
            let child = try #require(forked, "a successor that stopped answering cost a request its child")
            defer { child.close() }
            try expectEqual(child.wait().termination, .exited(0), "\(output)")
        }
        let silent = try #require(stopped, "a successor was started within eight requests")
        expect(!DecoderPrograms.exists(silent), "the successor that stopped answering was ended")
    }

    /// A program that notes each start in `directory`/starts and exits: it never answers a request.
    func noTemplate(in directory: URL) throws -> URL {
        let program = directory.appendingPathComponent("no-template")
        try "#!/bin/sh\necho started >> \(directory.path)/starts\n".write(to: program, atomically: true, encoding: .utf8)
        expectEqual(chmod(program.path, 0o755), 0)
        return program
    }

    func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("airlock-template-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        return directory
    }

    @Test("a program that is no template gives no child at once, and is not started again for the next drop")
    func failedTemplateFallsBack() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let program = try noTemplate(in: directory)
        let templates = TemplatePool()
        defer { templates.stop() }
        let started = Date()
        try expect(probe(templates, program.path).0 == nil)
        expectEqual(templates.templatePid(program.path, startUp: []), nil)
        try expect(probe(templates, program.path).0 == nil)
        expect(Date().timeIntervalSince(started) < 5, "its end-of-file ends the wait for a reply")
        let starts = try String(contentsOf: directory.appendingPathComponent("starts"), encoding: .utf8)
        expectEqual(starts, "started\n", "started once, not once per drop")
    }

    @Test("replaceAll (a reload) ends the running template, the next request starts a fresh one, and a failed program is tried again at once")
    func replacedOnReload() throws {
        let templates = TemplatePool()
        defer { templates.stop() }
        let decoder = DecoderPrograms.decoder
        var pids: [Int32] = []
        for round in 0..<2 {
            let (forked, output) = try probe(templates, decoder)
            let child = try #require(forked)
            defer { child.close() }
            try expectEqual(child.wait().termination, .exited(0), "\(output)")
            pids.append(try #require(templates.templatePid(decoder, startUp: [])))
            if round == 0 {
                templates.replaceAll()
                expect(!DecoderPrograms.exists(pids[0]), "killed and reaped")
                expectEqual(templates.templatePid(decoder, startUp: []), nil)
            }
        }
        expect(pids[0] != pids[1], "a fresh template served the request after the reload")

        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let program = try noTemplate(in: directory)
        try expect(probe(templates, program.path).0 == nil)
        templates.replaceAll()
        try expect(probe(templates, program.path).0 == nil)
        let starts = try String(contentsOf: directory.appendingPathComponent("starts"), encoding: .utf8)
        expectEqual(starts, "started\nstarted\n", "not left waiting out its failure after the reload")
    }
}
