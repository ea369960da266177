import AirlockChild
import AirlockSystem

/// Whether what the content rules need works right now, for `status` and
/// `doctor`: the magic database loads, and clamd answers PING.
public struct ContentHealth: Sendable {
    /// One line each, keyed `types` and `scanning`.
    public let types: String
    public let scanning: String
    /// False when drops will wait for either.
    public let healthy: Bool

    public static func check(_ configuration: Configuration) -> ContentHealth {
        var healthy = true
        let types: String
        if !configuration.content.detectTypes {
            types = "off (content.detect_types is false)"
        } else {
            do {
                _ = try ContentTypeDetector(database: configuration.content.magicDatabase)
                types = "libmagic, database \(configuration.content.magicDatabase) loads"
            } catch {
                healthy = false
                types = "DOWN: \(error); drops wait"
            }
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
        return ContentHealth(types: types, scanning: scanning, healthy: healthy)
    }
}
