import AirlockCore
import AirlockSystem

extension Operations {
    /// `events [--follow] [--after CURSOR]`: journal records as JSON Lines with
    /// their cursors; with --follow, polls for new ones until standard output closes.
    static func events(_ layout: RootLayout, _ configuration: Configuration, follow: Bool, after: EventFeed.Cursor?) -> Int32 {
        let feed = EventFeed(layout: layout, configuration: configuration)
        var cursor = after
        if follow {
            // A follower is stopped by SIGTERM or SIGINT, whatever mask or disposition
            // it inherited; what it printed last carries the cursor to resume from.
            let stopping: [Signal] = [.terminate, .interrupt]
            for signal in stopping { signal.restoreDefault() }
            Signal.unblock(stopping)
        }
        while true {
            let batch: (lines: [String], next: EventFeed.Cursor?)
            do {
                batch = try feed.read(after: cursor)
            } catch let expired as EventFeed.Expired {
                log.error(expired.description)
                return ExitStatus.dataError
            } catch {
                log.error("cannot read the journal: \(error)")
                return ExitStatus.ioError
            }
            for line in batch.lines {
                // A reader that has gone away ends the feed; its cursor says where it was.
                do {
                    try FileDescriptor(rawValue: 1).writeAll(Array((line + "\n").utf8))
                } catch {
                    return ExitStatus.ok
                }
            }
            cursor = batch.next
            guard follow else { return ExitStatus.ok }
            WallClock.sleep(milliseconds: 250)
        }
    }
}
