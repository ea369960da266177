import AirlockConfiguration
import AirlockPolicy
import AirlockRoot
import AirlockSystem
import Foundation

/// The publisher's durable place in the journal and its account of itself,
/// `state/publish-nats-TOKEN.json` (TOKEN: the instance's subject token), so
/// each instance keeps its own. Written atomically and fsynced by the publisher
/// after each batch of acknowledged records; read by `status`, `doctor` and the
/// daemon's metrics, which never talk to NATS themselves.
///
/// One versioned value with one encoder and one decoder: `{"version":1,
/// "cursor":…,"published":…,"failures":…,"last_error":…,"updated":…}`.
public struct PublishProgress: Sendable, Equatable {
    public static let version: Int64 = 1

    /// After the last record acknowledged by the stream; nil before the first.
    public var cursor: EventFeed.Cursor?
    /// Records acknowledged (duplicates included) since the file was made.
    public var published: Int64 = 0
    /// Failed attempts (connecting, the stream, a publish) since the file was made.
    public var failures: Int64 = 0
    /// The last failure, worded for the operator; empty once a publish succeeds.
    public var lastError = ""
    /// When the publisher last wrote the file.
    public var updated = ""

    public init() {}

    public static func fileName(_ settings: PublishSettings) -> [UInt8] {
        Array("publish-nats-\(InstanceToken.encode(settings.instanceName)).json".utf8)
    }

    public var encoded: [UInt8] {
        var json = JSONObjectWriter()
        json.add("version", PublishProgress.version)
        if let cursor { json.add("cursor", cursor.description) }
        json.add("published", published)
        json.add("failures", failures)
        json.add("last_error", lastError)
        json.add("updated", updated)
        return Array((json.text + "\n").utf8)
    }

    /// Decodes a file `encoded` wrote; nil for anything else (another version, a cut file).
    public init?(decoding bytes: [UInt8]) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              (object["version"] as? NSNumber)?.int64Value == PublishProgress.version,
              let published = (object["published"] as? NSNumber)?.int64Value,
              let failures = (object["failures"] as? NSNumber)?.int64Value,
              let lastError = object["last_error"] as? String, let updated = object["updated"] as? String else { return nil }
        if let text = object["cursor"] {
            guard let text = text as? String, let cursor = EventFeed.Cursor(text) else { return nil }
            self.cursor = cursor
        }
        self.published = published
        self.failures = failures
        self.lastError = lastError
        self.updated = updated
    }

    /// The file in `state`; nil when the publisher has never written one.
    /// - Throws: a `SystemError` other than ENOENT, or EPROTO for a file that does not decode.
    public static func load(_ state: FileDescriptor, _ settings: PublishSettings) throws(SystemError) -> PublishProgress? {
        let name = fileName(settings)
        let bytes: [UInt8]
        do {
            bytes = try state.open(name, [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) in try fd.readAll(limit: 1 << 16) }
        } catch where error.errno == .noEntry {
            return nil
        }
        guard let progress = PublishProgress(decoding: bytes) else { throw SystemError("decode", name, .protocolError) }
        return progress
    }

    /// Replaces the file durably (the state directory fsynced too).
    public func save(_ state: FileDescriptor, _ settings: PublishSettings) throws(SystemError) {
        let name = PublishProgress.fileName(settings)
        try state.replaceAtomically(name, with: encoded, temporary: name + Array(".tmp".utf8), AtomicWriteOptions(mode: 0o600))
    }
}

/// How far the publisher is behind the journal, for `status`, `doctor` and metrics.
public struct PublishLag: Sendable, Equatable {
    /// Records of a published kind after the publisher's cursor.
    public var records: Int
    public var progress: PublishProgress?
    /// Why the lag could not be counted exactly (the cursor's file rotated away).
    public var problem: String?

    /// Reads the publisher's file and counts what the journal holds after it; nil
    /// when nothing is to be published (no `publish.nats`).
    public static func measure(_ layout: RootLayout, _ configuration: Configuration) -> PublishLag? {
        guard let settings = configuration.publish else { return nil }
        let feed = EventFeed(layout: layout, configuration: configuration)
        var lag = PublishLag(records: 0, progress: nil, problem: nil)
        do {
            lag.progress = try PublishProgress.load(layout.state, settings)
        } catch {
            lag.problem = "the publisher's file cannot be read: \(error)"
        }
        do {
            let items = try feed.items(after: lag.progress?.cursor).items
            lag.records = items.filter { PublishSettings.events.contains($0.record.event) }.count
        } catch {
            // The publisher's place has been rotated away: all that is kept is behind it.
            let items = (try? feed.items(after: nil).items) ?? []
            lag.records = items.filter { PublishSettings.events.contains($0.record.event) }.count
            lag.problem = "\(error)"
        }
        return lag
    }

    /// One line for `status` and `doctor`.
    public var summary: String {
        var text = "\(records) record\(records == 1 ? "" : "s") not yet published"
        if let progress {
            text += "; \(progress.published) published, \(progress.failures) failure\(progress.failures == 1 ? "" : "s")"
            if !progress.lastError.isEmpty { text += "; last error: \(progress.lastError)" }
            if !progress.updated.isEmpty { text += "; its file last written \(progress.updated)" }
        } else {
            text += "; the publisher has not run yet (airlock publish)"
        }
        if let problem { text += "; \(problem)" }
        return text
    }
}

/// Which records the publisher sends, and as what: every accepted, rejected,
/// released and purged record, and a drop's first deferred record only (a drop
/// retried many times is reported deferred once). Each message is the record's
/// `airlock events` line, on `PREFIX.INSTANCE.EVENT`, with the message id
/// `ID:EVENT`.
public struct PublishPlan: Sendable {
    public struct Message: Sendable, Equatable {
        public let subject: String
        public let messageID: String
        public let payload: String
    }

    let settings: PublishSettings
    /// Drops with a deferred record and no verdict yet.
    private var deferred: Set<String> = []

    public init(settings: PublishSettings) {
        self.settings = settings
    }

    /// Notes a record before the starting point, so a drop deferred there is not
    /// reported deferred again.
    public mutating func skip(_ record: JournalRecord) {
        _ = message(for: EventFeed.Item(line: "", cursor: EventFeed.Cursor(inode: 0, generation: 0, offset: 0), record: record))
    }

    /// The message for `item`, nil for one not published.
    public mutating func message(for item: EventFeed.Item) -> Message? {
        let event = item.record.event
        guard PublishSettings.events.contains(event), let id = item.record.id else { return nil }
        switch item.record {
        case .deferred:
            guard deferred.insert(id).inserted else { return nil }
        case .accepted, .rejected:
            deferred.remove(id)
        default:
            break
        }
        return Message(subject: settings.subject(event: event), messageID: PublishSettings.messageID(id: id, event: event), payload: item.line)
    }
}
