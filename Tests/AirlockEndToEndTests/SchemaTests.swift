import AirlockTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// docs/schema.json: every field name airlock uses in JSON, with its one type.
struct FieldSchema {
    let fields: [String: [String: Any]]

    init() throws {
        let url = Binary.repository.appendingPathComponent("docs/schema.json")
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        fields = try #require(document?["fields"] as? [String: [String: Any]])
    }

    /// The JSON type of a value as JSONSerialization gives it.
    static func type(of value: Any) -> String {
        switch value {
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { return "boolean" }
            let double = number.doubleValue
            return double.rounded() == double && !"fd".contains(String(cString: number.objCType)) ? "integer" : "number"
        case is String: return "string"
        case is [Any]: return "array"
        case is [String: Any]: return "object"
        default: return "null"
        }
    }

    /// What in `object` (found in `source`) the schema does not allow, one line each.
    func violations(_ object: [String: Any], _ source: String) -> [String] {
        var found: [String] = []
        for (key, value) in object {
            guard let field = fields[key] else {
                found.append("\(source): '\(key)' is not in docs/schema.json")
                continue
            }
            let declared = field["type"] as? String ?? "?"
            let actual = FieldSchema.type(of: value)
            switch (declared, value) {
            case ("map", let map as [String: Any]):
                for (inner, item) in map where FieldSchema.type(of: item) != field["values"] as? String {
                    found.append("\(source): '\(key).\(inner)' is \(FieldSchema.type(of: item)), the schema says \(field["values"] ?? "?")")
                }
            case ("object", let nested as [String: Any]):
                found += violations(nested, source + "." + key)
            case ("array", let list as [Any]):
                for case let nested as [String: Any] in list { found += violations(nested, source + "." + key) }
            case ("number", _) where actual == "integer":
                break
            default:
                if declared != actual { found.append("\(source): '\(key)' is \(actual), the schema says \(declared)") }
            }
        }
        return found
    }
}

@Suite("One schema for every JSON airlock prints or writes")
struct SchemaTests {
    func objects(_ outcome: Outcome, _ source: String) -> [(String, [String: Any])] {
        expect(outcome.status == 0 || outcome.status == 65, "\(source): \(outcome.stderr)")
        let lines = outcome.stdout.split(separator: "\n")
        expectEqual(outcome.jsonObjects.count, lines.count, "\(source) printed a line that is not a JSON object")
        return outcome.jsonObjects.map { (source, $0) }
    }

    @Test("events, history, reports, quarantine list and show, status, doctor and inspect use the schema's names and types")
    func everyCommand() throws {
        let schema = try FieldSchema()
        let sandbox = try Sandbox()
        try sandbox.initialise()
        // libmagic too, so that types and mime_type are among the fields checked.
        try sandbox.configure("content", ["detect_types": true])
        let root = ["--root", sandbox.root.path]
        try sandbox.drop(Samples.validZip, as: "photos.zip")
        try sandbox.drop(Samples.traversalZip, as: "evil.zip")
        expectEqual(mkfifo(sandbox.inbox.appendingPathComponent("pipe").path, 0o644), 0)
        let run = try sandbox.runOnce()
        var documents = objects(run, "run --once")
        expectEqual(documents.count, 3)
        for entry in try FileManager.default.contentsOfDirectory(atPath: sandbox.outbox.path) {
            let manifest = try Data(contentsOf: sandbox.outbox.appendingPathComponent(entry).appendingPathComponent(manifestName))
            documents.append(("manifest", try #require(JSONSerialization.jsonObject(with: manifest) as? [String: Any])))
        }
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: sandbox.quarantine.path).sorted()
        expectEqual(quarantined.count, 2)
        for id in quarantined {
            let report = try Data(contentsOf: sandbox.quarantine.appendingPathComponent(id).appendingPathComponent("report.json"))
            documents.append(("report.json", try #require(JSONSerialization.jsonObject(with: report) as? [String: Any])))
        }
        for id in quarantined {
            let listed = try airlock(["quarantine", "contents", id, "--json"] + root)
            if listed.status == 0 { documents += objects(listed, "quarantine contents") }
        }
        let released = try airlock(["quarantine", "release", quarantined[0]] + root)
        expectEqual(released.status, 0, "\(released.stderr)")
        documents += objects(try airlock(["quarantine", "purge", quarantined[1]] + root), "quarantine purge")
        for (arguments, source) in [(["history", "--json"], "history"), (["quarantine", "list", "--json"], "quarantine list"),
                                    (["quarantine", "show", quarantined[0], "--json"], "quarantine show"),
                                    (["status", "--json"], "status"), (["doctor", "--json"], "doctor"),
                                    (["inspect", Samples.fixture("zip-traversal.zip").path], "inspect"),
                                    (["inspect", Samples.fixture("zip-deflate-valid.zip").path], "inspect")] {
            documents += objects(try airlock(arguments + root), source)
        }
        let sources = Set(documents.map(\.0))
        for expected in ["run --once", "report.json", "manifest", "history", "quarantine list", "quarantine show", "quarantine contents", "status", "doctor",
                         "inspect"] {
            expect(sources.contains(expected), "no JSON collected from \(expected)")
        }
        for (source, object) in documents {
            for violation in schema.violations(object, source) { Issue.record(Comment(rawValue: violation)) }
        }
        let events = run.events
        expectEqual(events.count, 3)
        for event in events {
            // A FIFO is quarantined unread: it has no size or hash to give.
            let read = event.reason != "not-regular-file"
            let measured: (duration: Int64?, uid: UInt32?, size: Int64?, sha256: String?) = switch event {
            case .accepted(let accepted): (accepted.durationMilliseconds, accepted.uploaderUID, accepted.size, accepted.sha256)
            case .rejected(let rejected): (rejected.durationMilliseconds, rejected.uploaderUID, rejected.size, rejected.sha256)
            default: (nil, nil, nil, nil)
            }
            expect(measured.duration != nil, "the \(event.kind) event lacks duration_ms")
            expectEqual(measured.uid, getuid(), "the \(event.kind) event lacks uploader_uid, or it is not ours")
            if read { expect(measured.size != nil && measured.sha256 != nil, "the \(event.kind) event lacks size or sha256") }
            expectEqual(event.time?.hasSuffix("Z"), true, "RFC 3339 in UTC")
        }
    }

    @Test("the schema's own entries are well formed")
    func wellFormed() throws {
        let schema = try FieldSchema()
        let types: Set = ["string", "integer", "number", "boolean", "object", "array", "map"]
        for (name, field) in schema.fields {
            expect(types.contains(field["type"] as? String ?? ""), "\(name)")
            expectEqual((field["description"] as? String)?.isEmpty, false, "\(name) is not described")
        }
    }
}
