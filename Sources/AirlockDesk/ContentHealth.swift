import AirlockChild
import AirlockConfiguration
import AirlockSystem

/// Whether what the content rules need works right now, for `status` and
/// `doctor`: which classes are denied, whether libmagic runs (and why) and its
/// database loads, and clamd answers PING.
public struct ContentHealth: Sendable {
    /// One line each, keyed `classes`, `types` and `scanning`.
    public let classes: String
    public let types: String
    public let scanning: String
    /// False when drops will wait for either.
    public let healthy: Bool

    public static func check(_ configuration: Configuration) -> ContentHealth {
        var healthy = true
        let types: String
        let denied = configuration.content.policy.denyClasses.sorted().map(\.rawValue)
        let classes = "always given; " + (denied.isEmpty ? "content.deny_classes denies none" : "content.deny_classes denies " + denied.joined(separator: ", "))
        if let reason = configuration.content.libmagicReason {
            do {
                _ = try ContentTypeDetector(database: configuration.content.magicDatabase)
                types = "libmagic runs (\(reason)), database \(configuration.content.magicDatabase) loads"
            } catch {
                healthy = false
                types = "DOWN: \(error); drops wait"
            }
        } else {
            types = "libmagic does not run (no rule names MIME types and content.detect_types is false): no mime_type in manifests"
        }
        let scanning: String
        if let client = configuration.scan.client {
            do {
                try client.ping()
                scanning = "clamd at \(client.socketPath) answers"
            } catch {
                healthy = false
                scanning = "DOWN: \(error); drops wait until clamd answers"
            }
        } else {
            scanning = "off (no scan.clamd_socket)"
        }
        return ContentHealth(classes: classes, types: types, scanning: scanning, healthy: healthy)
    }
}
