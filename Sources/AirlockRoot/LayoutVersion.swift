import AirlockConfiguration
import AirlockSystem
import Foundation

/// The version of the layout a root was made with, in `state/layout`: an airlock
/// refuses a root made by a newer one (it may not know what that one keeps
/// where), and `init` upgrades an older one in place.
///
/// 1: roots made before the version was recorded (no `state/layout`).
/// 2: the version recorded; entries get the outbox modes, metrics beneath `metrics/`.
package enum LayoutVersion {
    static let current = 2
    package static let fileName = "layout"

    /// The root's layout version; 1 when none is recorded.
    static func read(_ state: FileDescriptor) throws(SystemError) -> Int {
        let file: FileDescriptor
        do {
            file = try state.open(Array(fileName.utf8), [.readOnly, .noFollow])
        } catch where error.errno == .noEntry {
            return 1
        }
        let bytes = try file.closeAfter { (fd) throws(SystemError) in try fd.readAll(limit: 64) }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let version = Int(text), version >= 1 else {
            throw SystemError("read layout version", Array(fileName.utf8), .invalidArgument)
        }
        return version
    }

    static func newerMessage(_ path: String, _ version: Int) -> String {
        "root \(path) was laid out by a newer airlock (layout \(version); this airlock knows layouts up to \(current)): "
            + "run that version of airlock on it, or upgrade this one"
    }

    /// Records the current version in a root laid out by `init` (`fresh`: its claims
    /// directory was made just now, so nothing older can be in it; tmpfiles.d makes
    /// `state/` but not its subdirectories): nothing for a current root, the upgrade for an older one (returned for init's report), an
    /// error for a newer one.
    static func record(_ path: String, fresh: Bool) throws(ConfigurationError) -> String? {
        do throws(SystemError) {
            let state = try FileDescriptor.openDirectory(path: path + "/state")
            return try state.closeAfter { (state) throws(SystemError) -> String? in
                let found = try read(state)
                if found == current { return nil }
                guard found < current else { throw SystemError("layout", nil, .protocolError) }
                try state.replaceAtomically(Array(fileName.utf8), with: Array("\(current)\n".utf8),
                                            temporary: Array("\(fileName).tmp".utf8), .init(mode: 0o600))
                return fresh ? "state/\(fileName)" : "state/\(fileName) (layout \(found) upgraded in place to \(current))"
            }
        } catch where error.errno == .protocolError {
            let version = (try? FileDescriptor.openDirectory(path: path + "/state").closeAfter { (fd) throws(SystemError) in try read(fd) }) ?? 0
            throw ConfigurationError(newerMessage(path, version))
        } catch {
            throw ConfigurationError("root \(path): cannot record its layout version: \(error)")
        }
    }
}
