import AirlockConfiguration
import AirlockEvents
import AirlockJournal
import AirlockRoot
import AirlockSystem
import Dispatch
import Foundation
import Synchronization

/// `airlock publish`: follows the root's journal and publishes each outcome to
/// NATS JetStream, exactly once in the stream.
///
/// The journal stays the record; the publisher only reads it. It sends one
/// record at a time and waits for JetStream's acknowledgement before moving its
/// cursor past it, so the stream holds the records in journal order. The cursor
/// (`PublishProgress`) is fsynced after each batch rather than each record: after
/// a crash the records since the last save are sent again, with the same
/// `Nats-Msg-Id`, and the stream's duplicate window drops them. An outage can
/// outlast any window, so before sending anything, at start and after every
/// failure, the publisher reads the stream's last message on its own subjects
/// and resumes after the record it carries (its payload holds its cursor).
public final class Publisher {
    let layout: RootLayout
    let configuration: Configuration
    let settings: PublishSettings
    let feed: EventFeed
    let log = Log()
    let stopping: StopRequest
    var progress: PublishProgress
    var plan: PublishPlan
    var link: NatsLink?
    /// Records acknowledged since the cursor was last saved.
    var unsaved = 0
    /// Save the cursor after this many acknowledged records, and whenever the
    /// journal has nothing more for now.
    static let batch = 256

    public init(layout: RootLayout, configuration: Configuration, settings: PublishSettings, stopping: StopRequest) throws(SystemError) {
        self.layout = layout
        self.configuration = configuration
        self.settings = settings
        self.feed = EventFeed(layout: layout, configuration: configuration)
        self.stopping = stopping
        self.progress = try PublishProgress.load(layout.state, settings) ?? PublishProgress()
        self.plan = PublishPlan(settings: settings)
    }

    /// Checks the files the settings name (certificates, keys, credentials) before
    /// anything else, so a missing one is reported as configuration (status 78).
    public static func preflight(_ settings: PublishSettings) throws(NatsFailure) {
        try NatsLink.preflight(settings)
    }

    /// Runs until `stopping` is set; returns the exit status.
    public func run() -> Int32 {
        log.info("publishing \(layout.path)'s outcomes to stream \(settings.stream) on \(settings.subject(event: "EVENT")) via \(settings.servers.joined(separator: ", "))")
        var cursor: EventFeed.Cursor?
        var backoff = 250
        while !stopping.isSet {
            do {
                if link == nil {
                    cursor = try connect()
                    backoff = 250
                }
                let sent = try publishPending(after: &cursor)
                if sent == 0 { pause(milliseconds: 250) }
            } catch let failure as NatsFailure {
                record(failure: failure.description)
                link = nil
                pause(milliseconds: backoff)
                backoff = min(backoff * 2, 10_000)
            } catch let expired as EventFeed.Expired {
                // Rotation outran the publisher: start again from what the stream and the
                // journal still hold (connect() says what was lost).
                record(failure: "the journal rotated past the publisher's place: \(expired)")
                link = nil
            } catch {
                // The journal or the state directory: the publisher cannot go on safely.
                log.error("publisher: \(error)")
                save()
                return 74
            }
        }
        save()
        log.info("publisher stopped after \(progress.published) records; cursor \(progress.cursor?.description ?? "none")")
        return 0
    }

    /// Connects, checks the stream, and returns where to resume: after whichever
    /// is further, the saved cursor or the stream's last message of this instance.
    private func connect() throws -> EventFeed.Cursor? {
        let link = try NatsLink(settings)
        if let warning = try link.ensureStream() { log.warning(warning) }
        let streamCursor = try link.lastMessage().flatMap { PublisherResume.cursor(inPayload: $0.payload) }
        self.link = link
        let all = try feed.items(after: nil).items
        let kept = all.map(\.cursor)
        // A fleet's cursor need not be one a fresh read yields (records of several
        // journals interleave as they are appended): it is kept when the feed resumes after it.
        let start = PublisherResume.start(saved: progress.cursor, stream: streamCursor) { cursor in
            kept.contains(cursor) || (!cursor.isSingleJournal && (try? feed.items(after: cursor)) != nil)
        }
        if let warning = start.warning {
            log.warning(warning)
        }
        // A fresh plan that knows the drops deferred before the starting point.
        plan = PublishPlan(settings: settings)
        if let cursor = start.cursor, let index = all.firstIndex(where: { $0.cursor == cursor }) {
            for item in all[...index] { plan.skip(item.record) }
        } else if let cursor = start.cursor {
            for item in all where item.isCovered(by: cursor) == true { plan.skip(item.record) }
        }
        // Connected: the last failure is over, whether or not there is anything to send.
        if start.cursor != progress.cursor || !progress.lastError.isEmpty {
            progress.cursor = start.cursor
            progress.lastError = ""
            save()
        }
        log.info("connected; resuming after \(start.cursor?.description ?? "the start of the kept journal")\(start.fromStream ? " (the stream's last message)" : "")")
        return start.cursor
    }

    /// Publishes what the journal holds after `cursor`, moving it on; returns how
    /// many records were read.
    private func publishPending(after cursor: inout EventFeed.Cursor?) throws -> Int {
        guard let link else { return 0 }
        let items = try feed.items(after: cursor).items
        for item in items {
            if stopping.isSet { break }
            if let message = plan.message(for: item) {
                _ = try link.publish(message)
                progress.published += 1
                if !progress.lastError.isEmpty { progress.lastError = "" }
            }
            cursor = item.cursor
            progress.cursor = item.cursor
            unsaved += 1
            if unsaved >= Publisher.batch { save() }
        }
        if unsaved > 0 { save() }
        return items.count
    }

    private func record(failure: String) {
        progress.failures += 1
        if progress.lastError != failure { log.warning("publisher: \(failure); retrying") }
        progress.lastError = failure
        save()
    }

    /// Writes the progress file; a failure is logged and retried with the next save.
    private func save() {
        progress.updated = Publisher.now()
        do {
            try progress.save(layout.state, settings)
            unsaved = 0
        } catch {
            log.error("publisher: cannot save its cursor: \(error)")
        }
    }

    private func pause(milliseconds: Int) {
        var left = milliseconds
        while left > 0 && !stopping.isSet {
            WallClock.sleep(milliseconds: min(left, 100))
            left -= 100
        }
    }

    static func now() -> String {
        Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// Set from a signal handler's queue, read by the publishing loop.
public final class StopRequest: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public func set() { flag.store(true, ordering: .relaxed) }

    public var isSet: Bool { flag.load(ordering: .relaxed) }

    /// Sets the request on SIGTERM or SIGINT, whose default action is turned off
    /// first; the sources are kept by the caller for as long as it listens.
    public func listen() -> [DispatchSourceSignal] {
        [Signal.terminate, Signal.interrupt].map { signal in
            signal.ignore()
            let source = DispatchSource.makeSignalSource(signal: signal.rawValue, queue: .global())
            source.setEventHandler { [self] in set() }
            source.resume()
            return source
        }
    }
}

/// Where the publisher starts: after the saved cursor or after the stream's last
/// message of this instance, whichever is further along the journal and still kept.
enum PublisherResume {
    /// The `cursor` field of a published payload (an `airlock events` line).
    static func cursor(inPayload payload: [UInt8]) -> EventFeed.Cursor? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let text = object["cursor"] as? String else { return nil }
        return EventFeed.Cursor(text)
    }

    /// - Parameter isKept: whether a cursor names a place in the journals still kept.
    static func start(saved: EventFeed.Cursor?, stream: EventFeed.Cursor?, isKept: (EventFeed.Cursor) -> Bool)
        -> (cursor: EventFeed.Cursor?, fromStream: Bool, warning: String?) {
        let savedKept = saved.map(isKept) ?? false
        let streamKept = stream.map(isKept) ?? false
        switch (savedKept ? saved : nil, streamKept ? stream : nil) {
        case (let saved?, let stream?):
            return stream.isAfter(saved) == true ? (stream, true, nil) : (saved, false, nil)
        case (let saved?, nil):
            return (saved, false, nil)
        case (nil, let stream?):
            return (stream, true, nil)
        case (nil, nil):
            guard saved != nil || stream != nil else { return (nil, false, nil) }
            return (nil, false, "the publisher's place (\(saved?.description ?? "none")) and the stream's last message "
                    + "(\(stream?.description ?? "none")) name no kept journal record: publishing every kept record again "
                    + "(the duplicate window drops repeats it still remembers; records rotated away meanwhile were never published)")
        }
    }
}
