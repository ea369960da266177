import AirlockPolicy
import AirlockSystem
import AirlockText
import Foundation

/// How one drop ended, as the event line on standard output says it.
public struct DropOutcome: Sendable {
    public enum Verdict: Sendable, Equatable {
        case accepted(output: [UInt8], files: Int64, bytes: Int64)
        case rejected(Rejection)
        /// Not the input's fault (disk full, permissions): the drop stays claimed.
        case deferred(detail: String)
    }

    public let id: String
    public let dropName: [UInt8]
    public let verdict: Verdict
    /// The drop's size, when it was a regular file.
    public var size: Int64?
    /// Wall time from claim to verdict.
    public var seconds: Double = 0
    /// The drop's SHA-256, when it was read.
    public var sha256: String?
    /// Who owned the drop when it was claimed.
    public var uploader: Uploader?
    /// When the verdict was reached (RFC 3339, UTC).
    public var time: String = timestamp()

    public init(id: String, dropName: [UInt8], verdict: Verdict, size: Int64? = nil, seconds: Double = 0) {
        self.id = id
        self.dropName = dropName
        self.verdict = verdict
        self.size = size
        self.seconds = seconds
    }

    /// The JSON Lines event of the command-line contract; its fields are the
    /// ones `EventSchema` lists.
    public var eventLine: String {
        var json = JSONObjectWriter()
        json.add("time", time)
        eventFields(&json)
        json.add("duration_ms", Int64(seconds * 1000))
        if let size { json.add("size", size) }
        if let sha256 { json.add("sha256", sha256) }
        uploader?.add(to: &json)
        return json.text
    }

    private func eventFields(_ json: inout JSONObjectWriter) {
        switch verdict {
        case .accepted(let output, let files, let bytes):
            json.add("event", "accepted")
            json.add("id", id)
            json.add("drop", EscapedName(dropName).text)
            json.add("output", "outbox/" + EscapedName(output).text)
            json.add("files", files)
            json.add("bytes", bytes)
        case .rejected(let rejection):
            json.add("event", "rejected")
            json.add("id", id)
            json.add("drop", EscapedName(dropName).text)
            json.add("reason", rejection.reason.rawValue)
            if let entry = rejection.entry { json.add("entry", entry) }
            if let other = rejection.otherEntry { json.add("other_entry", other) }
            json.add("detail", rejection.detail)
            json.add("bytes_written", rejection.bytesWritten)
        case .deferred(let detail):
            json.add("event", "deferred")
            json.add("id", id)
            json.add("drop", EscapedName(dropName).text)
            json.add("detail", detail)
        }
    }

    /// One line for the human log.
    public var logLine: String {
        let name = EscapedName(dropName).text
        switch verdict {
        case .accepted(let output, let files, let bytes):
            return "accepted \(name) as outbox/\(EscapedName(output).text) (\(files) files, \(bytes) bytes) [\(id)]"
        case .rejected(let rejection):
            let entry = rejection.entry.map { " entry \"\($0)\"" } ?? ""
            return "rejected \(name): \(rejection.reason.rawValue)\(entry): \(rejection.detail) [\(id)]"
        case .deferred(let detail):
            return "deferred \(name): \(detail); it stays claimed and is retried [\(id)]"
        }
    }
}

/// Why a drop was rejected, as reports and events carry it.
public struct Rejection: Error, Sendable, Equatable {
    public var reason: Reason
    public var detail: String
    /// The offending entry, already escaped.
    public var entry: String?
    public var entryIndex: Int?
    /// For a conflict or a collision, the other entry involved, already escaped.
    public var otherEntry: String?
    public var bytesWritten: Int64 = 0
    public var format: String?

    public init(_ reason: Reason, _ detail: String, entry: String? = nil, entryIndex: Int? = nil) {
        self.reason = reason
        self.detail = detail
        self.entry = entry
        self.entryIndex = entryIndex
    }
}

/// The owner of a drop as seen when it was claimed: its uid, and the user name
/// that uid had then (nil when the password database has none).
public struct Uploader: Sendable, Equatable {
    public let uid: UInt32
    public let name: String?

    public init(uid: UInt32) {
        self.uid = uid
        name = userName(of: uid)
    }

    /// `uploader_uid` and, when known, `uploader`.
    public func add(to json: inout JSONObjectWriter) {
        json.add("uploader_uid", Int64(uid))
        if let name { json.add("uploader", name) }
    }
}

public enum AirlockVersion {
    public static let current = "0.2.0"
}

package func timestamp(_ date: Date = Date()) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
}

extension Array where Element == UInt8 {
    /// Lowercase hex.
    package var hex: String {
        let digits = [Character]("0123456789abcdef")
        var text = ""
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }

    /// Parses lowercase or uppercase hex; nil on anything else.
    package init?(hex: String) {
        let characters = Array(hex.utf8)
        guard characters.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let high = nibble(characters[index]), let low = nibble(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }
}
