import AirlockSystem
import Foundation

/// Where a configuration file is, found so that reading it cannot be turned against
/// the reader. Whoever may write the directory that holds airlock.json (the service
/// user, for ROOT/airlock.json) could make the name a link to /etc/shadow, whose
/// first token a parse error would print, or write a `root` that picks whose root a
/// superuser then acts on. So the directory is found first (as the superuser,
/// without following a link another user owns: TrustedPath), a superuser becomes
/// its owner before reading anything (RootAccess.assume), and the file itself is
/// opened beneath that directory without following a link, and read only if it is a
/// regular file owned by the directory's owner or by root.
///
/// The directory closes when the last copy of the source goes.
public struct ConfigurationSource {
    /// The path as given, for messages.
    public let path: String
    /// The directory that holds the file (O_PATH).
    let directory: SharedDescriptor
    let name: [UInt8]
    /// The owner of that directory: who a superuser becomes to read the file.
    public let owner: UInt32
    /// The directory's group, for an owner without an account.
    package let group: UInt32

    /// The most bytes airlock.json may hold.
    static let maxBytes = 1 << 20

    /// Finds the directory holding `path`; the file itself is not touched yet.
    public static func locate(_ path: String) throws(ConfigurationError) -> ConfigurationSource {
        let (directoryPath, name) = split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw ConfigurationError("\(path): names a directory, not a configuration file")
        }
        let directory: SharedDescriptor
        do {
            if Accounts.effectiveUserID == 0 {
                directory = SharedDescriptor(OwnedDescriptor(try TrustedPath.openDirectory(path: directoryPath)))
            } else {
                directory = SharedDescriptor(OwnedDescriptor(try FileDescriptor.open(path: directoryPath, [.readOnly, .directory])))
            }
        } catch where error.errno == .tooManyLinks && error.operation.hasPrefix("refuse") {
            throw ConfigurationError("\(path): \(error.operation) on the way (\(error.name ?? "")); as root, airlock follows only root's own "
                                     + "links to a configuration: give the path it points to", refusesAccess: true)
        } catch {
            throw ConfigurationError("\(path): cannot open its directory: \(error)")
        }
        do {
            let status = try directory.descriptor.status()
            return ConfigurationSource(path: path, directory: directory, name: Array(name.utf8), owner: status.owner, group: status.group)
        } catch {
            throw ConfigurationError("\(path): cannot examine its directory: \(error)")
        }
    }

    /// Reads and validates the file: a regular file, not a link, owned by the
    /// directory's owner or by root.
    public func read() throws(ConfigurationError) -> Configuration {
        let file: FileDescriptor
        do {
            file = try directory.descriptor.open(name, [.readOnly, .noFollow, .nonBlocking, .noControllingTerminal])
        } catch where error.errno == .tooManyLinks {
            throw ConfigurationError("\(path): is a symbolic link; airlock reads a configuration only from a regular file, "
                                     + "so that whoever may write its directory cannot point it at another file")
        } catch {
            throw ConfigurationError("\(path): cannot be read: \(error.errno)")
        }
        let bytes: [UInt8]
        do {
            bytes = try file.closeAfter { (file) throws(SystemError) -> [UInt8] in
                let status = try file.status()
                guard status.kind == .regular else { throw SystemError("read configuration", nil, .invalidArgument) }
                guard status.owner == owner || status.owner == 0 else {
                    throw SystemError("owned by uid \(status.owner)", nil, .notPermitted)
                }
                return try file.readAll(limit: ConfigurationSource.maxBytes + 1)
            }
        } catch where error.errno == .notPermitted {
            throw ConfigurationError("\(path): is \(error.operation), neither its directory's owner (uid \(owner)) nor root; "
                                     + "airlock reads only a configuration one of them wrote", refusesAccess: true)
        } catch where error.errno == .invalidArgument {
            throw ConfigurationError("\(path): is not a regular file")
        } catch {
            throw ConfigurationError("\(path): cannot be read: \(error.errno)")
        }
        guard bytes.count <= ConfigurationSource.maxBytes else {
            throw ConfigurationError("\(path): is larger than \(ConfigurationSource.maxBytes) bytes")
        }
        do {
            return try Configuration(json: Data(bytes))
        } catch {
            throw ConfigurationError("\(path): \(error.message)")
        }
    }

    /// The directory part (`.` when there is none) and the last component.
    package static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
