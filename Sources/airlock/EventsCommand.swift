import AirlockConfiguration
import AirlockJournal
import AirlockSystem

extension Operations {
    /// `events [--follow] [--after CURSOR]` on the root `choice` names, opened as a
    /// consumer may open it: the journal alone (see FeedAccess), so the members of
    /// `outbox.group` follow the feed without access to the rest of the root.
    static func events(_ given: Command.RootChoice, follow: Bool, after: EventFeed.Cursor?) -> Int32 {
        let root: String, configuration: Configuration
        do {
            (root, configuration) = try CommandRunner.resolveAsOwner(given)
        } catch {
            return CommandRunner.unreachable(error)
        }
        let feed: EventFeed
        do {
            feed = try EventFeed.open(root: root, configuration: configuration)
        } catch where error.errno == .permissionDenied || error.errno == .notPermitted {
            let group = configuration.outboxGroup.isEmpty ? "none is set" : "\"\(configuration.outboxGroup)\""
            log.error("permission denied: \(root)/state/journal.jsonl: \(error.errno); the event feed may be read by airlock's user and by "
                + "the members of \(SettingDefinition.outboxGroup.name) (\(group)): add this user to that group (usermod -aG GROUP USER, then log in again)")
            return ExitStatus.noPermission
        } catch {
            log.error("root \(root): cannot open the event feed: \(error); create the root with 'airlock init --root \(root)'")
            return ExitStatus.configuration
        }
        return events(feed, follow: follow, after: after)
    }

    /// The journal's records as JSON Lines with their cursors; with --follow, polls
    /// for new ones until standard output closes.
    static func events(_ feed: EventFeed, follow: Bool, after: EventFeed.Cursor?) -> Int32 {
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
