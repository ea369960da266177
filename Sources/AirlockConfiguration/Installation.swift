import AirlockSystem

/// Whether this airlock runs from a build tree or from an installation, told from
/// where its decoder programs are relative to its own executable (never from PATH
/// or the working directory): beside it in a build tree (`.build/debug/`), in
/// `PREFIX/libexec/airlock/` when installed as `PREFIX/bin/airlock` (make install,
/// the Debian package).
///
/// The difference matters when a command is given neither `--root` nor `--config`:
/// a build tree then works on `./var` (what `make run` lays out), an installation
/// on the root its system configuration names, and never on a `./var` in whatever
/// directory the administrator happens to stand in.
public enum Installation: Equatable, Sendable {
    case buildTree(directory: String)
    case installed(prefix: String)
    /// The decoders are in neither place: airlock cannot decode (see DecoderLocation).
    case unknown

    /// The running executable's installation, found once.
    public static let current = Installation.find()

    static func find() -> Installation {
        guard let target = try? PathQueries.linkTarget("/proc/self/exe"), !target.isEmpty else { return .unknown }
        let me = String(decoding: target, as: UTF8.self)
        guard let slash = me.lastIndex(of: "/") else { return .unknown }
        let directory = String(me[..<slash])
        if hasDecoders(directory) { return .buildTree(directory: directory) }
        guard let parent = directory.lastIndex(of: "/") else { return .unknown }
        let prefix = String(directory[..<parent])
        return hasDecoders(prefix + "/libexec/airlock") ? .installed(prefix: prefix) : .unknown
    }

    private static func hasDecoders(_ directory: String) -> Bool {
        DropFormat.programs.allSatisfy { PathQueries.isExecutable(directory + "/" + $0) }
    }

    /// The system configuration of an installation: `/etc/airlock/airlock.json` for
    /// PREFIX `/usr` (the package), `PREFIX/etc/airlock/airlock.json` otherwise
    /// (`/usr/local/etc/airlock/airlock.json` for make install's default). For a
    /// prefix that ends in `/usr` the `etc` beside that `usr` is taken, so an
    /// installation under a DESTDIR finds its own. nil in a build tree.
    public var systemConfiguration: String? {
        guard case .installed(let prefix) = self else { return nil }
        guard prefix.hasSuffix("/usr") || prefix == "/usr" else { return prefix + "/etc/airlock/airlock.json" }
        return String(prefix.dropLast("/usr".count)) + "/etc/airlock/airlock.json"
    }
}
