import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Real files of the kinds the content rules are about, made on the spot, and
/// ZIP and tar archives of them built with Python's zipfile and tarfile in the
/// order given.
enum ContentFiles {
    /// The EICAR test string, which every scanner reports and which harms nothing.
    static let eicar = Data(#"X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*"#.utf8)

    /// Each kind: its bytes, and the type libmagic names from its first bytes.
    static func sample(_ kind: String) throws -> (data: Data, type: String) {
        switch kind {
        case "empty": return (Data(), "application/x-empty")
        case "text": return (Data("Invoice 2026-11\nTotal: 42.00 EUR\n".utf8), "text/plain")
        case "png": return (try python(pngScript), "image/png")
        case "pdf": return (Data(pdfText.utf8), "application/pdf")
        case "gzip": return (try python("import gzip,sys; sys.stdout.buffer.write(gzip.compress(b'hello ' * 100, mtime=0))"), "application/gzip")
        // Read from its first bytes only (no descriptor), libmagic cannot see an ELF's
        // PIE flag and names a position-independent executable a shared library.
        case "elf": return (try Data(contentsOf: URL(fileURLWithPath: "/bin/true")), "application/x-sharedlib")
        case "script": return (Data("#!/bin/sh\necho hello\n".utf8), "text/x-shellscript")
        case "html": return (Data("<!DOCTYPE html>\n<html><head><title>x</title></head><body><p>hello</p></body></html>\n".utf8), "text/html")
        default: preconditionFailure("no sample kind \(kind)")
        }
    }

    static let pdfText = """
        %PDF-1.4
        1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
        2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj
        trailer << /Root 1 0 R >>
        %%EOF

        """

    /// A 1x1 PNG written by zlib and struct, chunk by chunk with CRCs.
    static let pngScript = """
        import struct, sys, zlib
        def chunk(kind, body):
            return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))
        sys.stdout.buffer.write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 2, 0, 0, 0))
                                + chunk(b'IDAT', zlib.compress(b'\\x00\\xff\\x00\\x00')) + chunk(b'IEND', b''))
        """

    /// An archive of `entries` in that order: `zip` or `tar`.
    static func archive(_ format: String, _ entries: [(name: String, data: Data)]) throws -> Data {
        // Base64, which Foundation encodes whole: hex by String(format:) per byte cost
        // seconds for a file of a few MiB in a debug build.
        let listing = entries.map { ["name": $0.name, "base64": $0.data.base64EncodedString()] }
        let input = try JSONSerialization.data(withJSONObject: listing)
        let script = """
            import base64, io, json, sys, tarfile, zipfile
            entries = json.load(sys.stdin)
            out = io.BytesIO()
            if sys.argv[1] == 'zip':
                with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as archive:
                    for entry in entries:
                        archive.writestr(zipfile.ZipInfo(entry['name'], (2026, 1, 1, 0, 0, 0)), base64.b64decode(entry['base64']))
            else:
                with tarfile.open(fileobj=out, mode='w', format=tarfile.PAX_FORMAT) as archive:
                    for entry in entries:
                        info = tarfile.TarInfo(entry['name'])
                        data = base64.b64decode(entry['base64'])
                        info.size, info.mode = len(data), 0o644
                        archive.addfile(info, io.BytesIO(data))
            sys.stdout.buffer.write(out.getvalue())
            """
        return try python(script, arguments: [format], input: input)
    }

    static func python(_ script: String, arguments: [String] = [], input: Data = Data()) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script] + arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        expectEqual(process.terminationStatus, 0, "python3 failed")
        return data
    }
}

extension Sandbox {
    /// The last journal record of `event` kind.
    func lastJournalRecord(_ event: Event.Kind) throws -> Event? {
        try journal().last { $0.kind == event }
    }

    /// Expects exactly one rejection for `reason` naming `entry`, the original
    /// bytes in the quarantine and nothing in the outbox; the report.
    func expectRejected(_ outcome: Outcome, _ reason: String, entry: String, original: Data,
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> Report? {
        let event = try #require(outcome.events.first, "no event: \(outcome.stderr)", sourceLocation: sourceLocation)
        expectEqual(outcome.events.count, 1, "\(outcome.events) \(outcome.stderr)", sourceLocation: sourceLocation)
        expectEqual(event.reason, reason, "\(event)", sourceLocation: sourceLocation)
        expectEqual(event.entry, entry, "\(event)", sourceLocation: sourceLocation)
        try expectInvariants(sourceLocation: sourceLocation)
        try expectEqual(listing(outbox), [], sourceLocation: sourceLocation)
        guard let (_, report, drop) = try onlyQuarantined(sourceLocation: sourceLocation) else { return nil }
        try expectEqual(Data(contentsOf: drop), original, "the original is kept in quarantine", sourceLocation: sourceLocation)
        return report
    }
}
