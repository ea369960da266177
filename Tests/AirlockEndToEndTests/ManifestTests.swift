import AirlockTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("The manifest: in every accepted entry, appearing with it in one rename")
struct ManifestTests {
    @Test("it lists every file with size and SHA-256, and the drop's id, name, size, hash and uploader")
    func contents() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        let run = try sandbox.runOnce()
        let event = try #require(run.events.first)
        let entry = sandbox.root.appendingPathComponent(try #require(event.output))
        let manifest = try Manifest.read(in: entry)
        let accepted = try #require(event.accepted)
        expectEqual(manifest.manifestVersion, 2)
        expectEqual(manifest.id, accepted.id)
        expectEqual(manifest.drop, accepted.drop)
        expect(manifest.sha256 != nil && manifest.sha256 == accepted.sha256)
        expect(manifest.size != nil && manifest.size == accepted.size)
        expect(manifest.uploaderUID != nil && manifest.uploaderUID == accepted.uploaderUID)
        let files = manifest.outboxFiles
        let onDisk = try sandbox.listing(entry).filter { !$0.hasSuffix("/") }
        expectEqual(files.map(\.entry), onDisk)
        expectEqual(Int64(files.count), event.files)
        let hashes = try sha256Hexes(onDisk, in: entry)
        for file in files {
            let path = file.entry
            expectEqual(file.sha256, hashes[path], "\(path)")
            let size = try FileManager.default.attributesOfItem(atPath: entry.appendingPathComponent(path).path)[.size] as? Int
            expectEqual(Int(file.entrySize), size, "\(path)")
        }
        var st = stat()
        expect(stat(entry.appendingPathComponent(manifestName).path, &st) == 0 && st.st_mode & 0o777 == 0o644)
        try sandbox.expectInvariants()
    }

    /// The manifest of `event`'s entry, and the SHA-256 of each file it holds on disk.
    func manifestAndHashes(_ sandbox: Sandbox, _ event: Event) throws -> (files: [String: String], onDisk: [String: String]) {
        let entry = sandbox.root.appendingPathComponent(try #require(event.output))
        var listed: [String: String] = [:]
        for file in try Manifest.read(in: entry).outboxFiles { listed[file.entry] = file.sha256 }
        let paths = try sandbox.listing(entry).filter { !$0.hasSuffix("/") }
        return (listed, try sha256Hexes(paths, in: entry))
    }

    @Test("large files, hashed while the decoder still runs, are listed with the SHA-256 of what the entry holds")
    func largeFilesHashedEarly() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        // Byte i is i * 131 + seed modulo 256, which repeats every 256 bytes: one
        // period appended whole, not a closure per byte (seconds in a debug build).
        func data(_ size: Int, _ seed: Int) -> [UInt8] {
            let period = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ seed) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(size)
            while bytes.count < size { bytes += period.prefix(size - bytes.count) }
            return bytes
        }
        let tar = TarBuild(entries: [
            .init(name: Array("big.bin".utf8), data: data(3 << 20, 1)),
            .init(name: Array("deep/er/exactly-one-mib.bin".utf8), data: data(1 << 20, 2)),
            .init(name: Array("deep/under.bin".utf8), data: data((1 << 20) - 1, 3)),
            .init(name: Array("small.txt".utf8), data: Array("hello\n".utf8)),
        ])
        try sandbox.drop(tar.bytes, as: "large.tar")
        let run = try sandbox.runOnce()
        let event = try #require(run.events.first)
        expectEqual(event.kind, .accepted, "\(event) \(run.stderr)")
        let (listed, onDisk) = try manifestAndHashes(sandbox, event)
        expect(listed.count == 4 && listed == onDisk, "manifest \(listed), on disk \(onDisk)")
        try sandbox.expectInvariants()
    }

    @Test("a decoder that changes a file after announcing it written gets the hash of what is there at the end",
          arguments: ["forge-rewrite-mapped", "forge-replace-announced"])
    func changedAfterNotice(_ fault: String) throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        try sandbox.drop(Samples.validZip, as: "changed.zip")
        let run = try sandbox.runOnce(environment: ["AIRLOCK_TEST_DECODER_FAULT": fault])
        let event = try #require(run.events.first)
        expectEqual(event.kind, .accepted, "\(event) \(run.stderr)")
        let entry = sandbox.root.appendingPathComponent(try #require(event.output))
        let held = try Data(contentsOf: entry.appendingPathComponent("big.bin"))
        expectEqual(held, Data(repeating: 0x62, count: 2 << 20), "the fault did not change the file")
        let (listed, onDisk) = try manifestAndHashes(sandbox, event)
        expect(listed["big.bin"] != nil && listed == onDisk, "manifest \(listed), on disk \(onDisk)")
        try sandbox.expectInvariants()
    }

    @Test("a consumer listing the outbox while drops land never sees an entry without its manifest", .needsLeases)
    func atomic() throws {
        let sandbox = try Sandbox()
        try sandbox.initialise()
        let daemon = try RunningDaemon(sandbox)
        let outbox = sandbox.outbox.path
        let stop = Atomic<Bool>(false)
        let seen = Mutex<(entries: Set<String>, missing: [String])>(([], []))
        let consumer = Thread {
            while !stop.load(ordering: .relaxed) {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? [] {
                    // An entry's directory and its manifest came in one rename: if the
                    // name is listed, the manifest is in it.
                    let present = FileManager.default.fileExists(atPath: outbox + "/" + name + "/" + manifestName)
                    seen.withLock { state in
                        state.entries.insert(name)
                        if !present { state.missing.append(name) }
                    }
                }
            }
        }
        consumer.start()
        let count = 30
        for index in 0..<count {
            let temporary = sandbox.inbox.appendingPathComponent("drop\(index).zip.part")
            try Samples.validZip.write(to: temporary)
            expectEqual(rename(temporary.path, sandbox.inbox.appendingPathComponent("drop\(index).zip").path), 0)
        }
        let verdicts = daemon.waitForVerdicts(count)
        stop.store(true, ordering: .relaxed)
        daemon.signal(SIGTERM)
        expectEqual(daemon.waitForExit(seconds: 15), 0)
        expectEqual(verdicts.filter { $0.kind == .accepted }.count, count)
        let (entries, missing) = seen.withLock { ($0.entries, $0.missing) }
        expect(missing.isEmpty, "seen without a manifest: \(missing)")
        expect(entries.count > count / 2, "the consumer saw only \(entries.count) of \(count) entries land")
        let landed = try FileManager.default.contentsOfDirectory(atPath: outbox)
        expectEqual(landed.count, count)
        for name in landed { expect(FileManager.default.fileExists(atPath: outbox + "/" + name + "/" + manifestName)) }
    }
}
