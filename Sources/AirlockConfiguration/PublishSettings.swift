import AirlockPolicy
import AirlockSystem
import Foundation

/// `publish.nats`: where `airlock publish` sends the journal's outcomes. Absent
/// (the default), nothing is published and no other program needs to run.
///
/// The credentials and keys are files the publisher alone reads (its unit loads
/// them with `LoadCredential=`); the configuration names them and holds no secret.
public struct PublishSettings: Sendable, Equatable {
    /// `nats://HOST:PORT` or `tls://HOST:PORT`, tried in turn.
    public var servers: [String] = []
    public var stream = ""
    public var subjectPrefix = "airlock"
    /// Empty: the host's name. Mapped to one subject token by `InstanceToken`.
    public var instance = ""
    /// Whether the publisher creates the stream when it is missing; otherwise a
    /// missing stream is an error it reports and retries.
    public var createStream = false
    public var duplicateWindowSeconds: Int64 = 7200
    /// PEM files: the CA that signed the server's certificate; the client's own
    /// certificate and key when the server asks for one.
    public var tlsCAFile = ""
    public var tlsCertFile = ""
    public var tlsKeyFile = ""
    /// A NATS credentials file (a user JWT and its nkey seed, as `nsc` writes it).
    public var credsFile = ""
    /// A file holding one line `USER:PASSWORD`, for a server with
    /// `authorization { users = [...] }`.
    public var userPasswordFile = ""

    public init() {}

    /// The events published, each on `PREFIX.INSTANCE.EVENT`.
    public static let events = ["accepted", "rejected", "deferred", "released", "purged"]

    /// The instance name used when `instance` is empty: the host's name as the
    /// kernel holds it (gethostname, no resolver lookup, so the intake daemon,
    /// which has no network, and the publisher agree).
    public var instanceName: String {
        instance.isEmpty ? CurrentProcess.hostName() ?? "" : instance
    }

    /// `PREFIX.INSTANCE.EVENT`.
    public func subject(event: String) -> String {
        subjectPrefix + "." + InstanceToken.encode(instanceName) + "." + event
    }

    /// The JetStream message id of one outcome: the drop's id and the event, so a
    /// republished record is recognised inside the duplicate window.
    public static func messageID(id: String, event: String) -> String { id + ":" + event }

    static let sectionKeys = ["servers", "stream", "subject_prefix", "instance", "create_stream", "duplicate_window_seconds",
                              "tls_ca_file", "tls_cert_file", "tls_key_file", "creds_file", "user_password_file"]

    /// Reads the `nats` object of the `publish` section.
    init(_ reader: inout ObjectReader) throws(ConfigurationError) {
        guard let servers = try reader.stringArray("servers"), !servers.isEmpty, servers.count <= 32 else {
            throw ConfigurationError("publish.nats.servers: must list 1 to 32 server URLs")
        }
        for server in servers where !PublishSettings.isServerURL(server) {
            throw ConfigurationError("publish.nats.servers: \(JSONObjectWriter.quote(server)) is not a nats://, tls:// URL with a host and a port")
        }
        self.servers = servers
        guard let stream = try reader.string("stream"), PublishSettings.isStreamName(stream) else {
            throw ConfigurationError("publish.nats.stream: must be a stream name of 1 to 255 bytes without whitespace, '.', '*', '>', '/' or '\\'")
        }
        self.stream = stream
        if let prefix = try reader.string("subject_prefix") {
            guard PublishSettings.isSubjectPrefix(prefix) else {
                throw ConfigurationError("publish.nats.subject_prefix: must be dot-separated tokens of letters, digits, '-' and '_', at most 128 bytes")
            }
            subjectPrefix = prefix
        }
        if let instance = try reader.string("instance") {
            guard !instance.contains("\0"), instance.utf8.count <= 255 else {
                throw ConfigurationError("publish.nats.instance: must be at most 255 bytes without NUL")
            }
            self.instance = instance
        }
        createStream = try reader.bool("create_stream") ?? false
        for (key, path) in [("tls_ca_file", \PublishSettings.tlsCAFile), ("tls_cert_file", \.tlsCertFile), ("tls_key_file", \.tlsKeyFile),
                            ("creds_file", \.credsFile), ("user_password_file", \.userPasswordFile)] {
            guard let file = try reader.string(key) else { continue }
            guard file.isEmpty || (file.hasPrefix("/") && !file.contains("\0") && file.utf8.count <= Configuration.maxPathSettingBytes) else {
                throw ConfigurationError("publish.nats.\(key): must be \"\" or an absolute path")
            }
            self[keyPath: path] = file
        }
        guard tlsCertFile.isEmpty == tlsKeyFile.isEmpty else {
            throw ConfigurationError("publish.nats.tls_cert_file and tls_key_file: give both or neither")
        }
        guard credsFile.isEmpty || userPasswordFile.isEmpty else {
            throw ConfigurationError("publish.nats.creds_file and user_password_file: give one or neither")
        }
    }

    /// The keys as `airlock init` would write them (only when publishing is configured).
    var renderedKeys: [String] {
        ["\"servers\": [\(servers.map(JSONObjectWriter.quote).joined(separator: ", "))]",
         "\"stream\": \(JSONObjectWriter.quote(stream))",
         "\"subject_prefix\": \(JSONObjectWriter.quote(subjectPrefix))",
         "\"instance\": \(JSONObjectWriter.quote(instance))",
         "\"create_stream\": \(createStream)",
         "\"tls_ca_file\": \(JSONObjectWriter.quote(tlsCAFile))",
         "\"tls_cert_file\": \(JSONObjectWriter.quote(tlsCertFile))",
         "\"tls_key_file\": \(JSONObjectWriter.quote(tlsKeyFile))",
         "\"creds_file\": \(JSONObjectWriter.quote(credsFile))",
         "\"user_password_file\": \(JSONObjectWriter.quote(userPasswordFile))"]
    }

    static func isServerURL(_ text: String) -> Bool {
        guard let url = URLComponents(string: text), ["nats", "tls"].contains(url.scheme ?? ""),
              let host = url.host, !host.isEmpty, url.port != nil, url.user == nil, url.password == nil,
              (url.path.isEmpty || url.path == "/"), url.query == nil else { return false }
        return true
    }

    static func isStreamName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255
            && !name.unicodeScalars.contains { $0.properties.isWhitespace || ".*>/\\\0".unicodeScalars.contains($0) || $0.value < 0x20 }
    }

    static func isSubjectPrefix(_ prefix: String) -> Bool {
        let tokens = prefix.split(separator: ".", omittingEmptySubsequences: false)
        return prefix.utf8.count <= 128 && !tokens.isEmpty && tokens.allSatisfy { token in
            !token.isEmpty && token.utf8.allSatisfy { InstanceToken.isPlain($0) }
        }
    }
}

/// How an instance name becomes one NATS subject token: ASCII letters, digits,
/// `-` and `_` stand for themselves; every other byte of its UTF-8 (`.`, `*`,
/// `>`, `%`, whitespace, controls, non-ASCII) is written `%HH` in upper-case hex.
/// The mapping is injective (`%` itself is escaped) and never yields a token
/// with a character NATS gives meaning to, so `db1.example.org` publishes on
/// `airlock.db1%2Eexample%2Eorg.accepted`, and a consumer subscribes to one
/// instance with that token or to all with `airlock.*.accepted`.
public enum InstanceToken {
    static func isPlain(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
    }

    /// The token for `name`; empty for an empty name, which the publisher refuses.
    public static func encode(_ name: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in name.utf8 {
            if isPlain(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
