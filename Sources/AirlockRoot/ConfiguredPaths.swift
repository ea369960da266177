import AirlockConfiguration
import AirlockPolicy
import AirlockSystem
import Foundation

/// Configured paths may not lead into the places airlock moves drops through, nor
/// onto a file it keeps: a metrics file in the inbox would be taken for a drop
/// and quarantined, one in `state/claimed` would be taken for a claim, one named
/// `state/journal.jsonl` would overwrite the journal.
extension Configuration {
    /// Directories whose entries airlock takes, moves or deletes as its own.
    static let managedDirectories: [[String]] = [
        ["inbox"], ["outbox"], ["quarantine"], ["state", "claimed"], ["state", "staging"], ["state", "purging"],
    ]

    /// Checks `metrics.path` and the configuration file against the root they serve.
    ///
    /// - Parameter configurationFile: the file this configuration came from, if any.
    /// - Throws: a ConfigurationError naming the setting (exit status 78).
    public func checkPaths(in layout: RootLayout, configurationFile: String?) throws(ConfigurationError) {
        if !metricsPath.isEmpty {
            let absolute = metricsPath.hasPrefix("/") ? metricsPath : layout.path + "/" + metricsPath
            if let problem = Configuration.conflict(absolute, layout: layout, keptFilesToo: true) {
                throw ConfigurationError("metrics.path: \(JSONObjectWriter.quote(metricsPath)) \(problem); choose another, such as metrics/airlock.prom (the default)")
            }
        }
        if let configurationFile {
            let absolute = configurationFile.hasPrefix("/")
                ? configurationFile : FileManager.default.currentDirectoryPath + "/" + configurationFile
            if let problem = Configuration.conflict(absolute, layout: layout, keptFilesToo: false) {
                throw ConfigurationError("\(configurationFile): the configuration file \(problem); keep it beside the root or at ROOT/airlock.json")
            }
        }
    }

    /// Why the file at `path` may not be there, or nil.
    private static func conflict(_ path: String, layout: RootLayout, keptFilesToo: Bool) -> String? {
        let file = URL(fileURLWithPath: path).standardized
        // Symbolic links in the directory part are resolved, so another spelling of
        // the inbox is still the inbox.
        let parent = file.deletingLastPathComponent().resolvingSymlinksInPath().path
        let root = URL(fileURLWithPath: layout.path).standardized.resolvingSymlinksInPath().path
        let components = parent.split(separator: "/").map(String.init) + [file.lastPathComponent]
        let rootComponents = root.split(separator: "/").map(String.init)
        if components.count > rootComponents.count, Array(components.prefix(rootComponents.count)) == rootComponents {
            let inside = Array(components.dropFirst(rootComponents.count))
            for directory in managedDirectories where inside.count > directory.count && Array(inside.prefix(directory.count)) == directory {
                return "is inside \(directory.joined(separator: "/"))/, where airlock takes every entry as its own"
            }
            if keptFilesToo, let kept = keptFile(inside) { return "is \(kept), which airlock keeps" }
        }
        // The same directory under another name (a bind mount, say).
        guard let opened = try? FileDescriptor.openDirectory(path: parent) else { return nil }
        defer { opened.close() }
        guard let identity = try? opened.status() else { return nil }
        for directory in managedDirectories {
            guard let managed = try? FileDescriptor.openDirectory(path: layout.path + "/" + directory.joined(separator: "/")) else { continue }
            defer { managed.close() }
            if let status = try? managed.status(), status.device == identity.device, status.inode == identity.inode {
                return "is inside \(directory.joined(separator: "/"))/, where airlock takes every entry as its own"
            }
        }
        return nil
    }

    /// The file or directory of a root that `components` (relative to it) names, if airlock keeps it.
    private static func keptFile(_ components: [String]) -> String? {
        let path = components.joined(separator: "/")
        if components.count == 1, ["airlock.json", "inbox", "outbox", "quarantine", "state"].contains(path) { return path }
        guard components.count == 2, components[0] == "state" else { return nil }
        let name = components[1]
        let journal = name.hasPrefix("journal.")
            && (name.hasSuffix(".jsonl") || ["journal.lock", "journal.next", "journal.generations", "journal.generations.tmp"].contains(name))
        if journal || ["airlock.pid", "claimed", "staging", "purging"].contains(name) { return path }
        return nil
    }
}
