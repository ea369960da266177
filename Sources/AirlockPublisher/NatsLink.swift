import AirlockConfiguration
import AirlockJournal
import CNats
import Foundation

/// A failure of the NATS client or of JetStream, worded for the log.
public struct NatsFailure: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// One connection to NATS and its JetStream context, over the C client.
///
/// Every call is synchronous: a publish returns once JetStream has acknowledged
/// (stored) the message or the wait has run out. The client reconnects by itself
/// after a connection is lost; a call made meanwhile fails and is retried by the
/// publisher. The options, connection and context are owned here and destroyed
/// in `deinit`.
final class NatsLink {
    private let connection: OpaquePointer
    private let context: OpaquePointer
    private let settings: PublishSettings
    /// How long a publish or a JetStream request waits for its answer.
    static let waitMilliseconds: Int64 = 5000

    /// Connects to the first server of `settings.servers` that answers.
    init(_ settings: PublishSettings) throws(NatsFailure) {
        self.settings = settings
        var options: OpaquePointer?
        try NatsLink.check(natsOptions_Create(&options), "creating the client's options")
        defer { natsOptions_Destroy(options) }
        try NatsLink.configure(options, settings)
        var connection: OpaquePointer?
        try NatsLink.check(natsConnection_Connect(&connection, options), "connecting to \(settings.servers.joined(separator: ", "))")
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = NatsLink.waitMilliseconds
        var context: OpaquePointer?
        let status = natsConnection_JetStream(&context, connection, &jsOptions)
        guard status == NATS_OK, let context, let connection else {
            natsConnection_Destroy(connection)
            throw NatsLink.failure(status, "opening JetStream")
        }
        self.connection = connection
        self.context = context
    }

    deinit {
        jsCtx_Destroy(context)
        natsConnection_Destroy(connection)
    }

    private static func configure(_ options: OpaquePointer?, _ settings: PublishSettings) throws(NatsFailure) {
        let servers = settings.servers.map { server in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: server.utf8.count + 1)
            copy.initialize(from: server.utf8CString.map { $0 }, count: server.utf8.count + 1)
            return UnsafePointer(copy)
        }
        defer { servers.forEach { UnsafeMutablePointer(mutating: $0).deallocate() } }
        var list: [UnsafePointer<CChar>?] = servers
        try check(natsOptions_SetServers(options, &list, Int32(list.count)), "the server list")
        try check(natsOptions_SetName(options, "airlock-publisher \(settings.instanceName)"), "the client's name")
        try check(natsOptions_SetTimeout(options, 2000), "the connect timeout")
        try check(natsOptions_SetMaxReconnect(options, -1), "reconnection")
        try check(natsOptions_SetReconnectWait(options, 500), "reconnection")
        let tls = settings.servers.contains { $0.hasPrefix("tls://") } || !settings.tlsCAFile.isEmpty
        if tls { try check(natsOptions_SetSecure(options, true), "TLS") }
        if !settings.tlsCAFile.isEmpty {
            try check(natsOptions_LoadCATrustedCertificates(options, settings.tlsCAFile), "tls_ca_file \(settings.tlsCAFile)")
        }
        if !settings.tlsCertFile.isEmpty {
            try check(natsOptions_LoadCertificatesChain(options, settings.tlsCertFile, settings.tlsKeyFile),
                      "tls_cert_file \(settings.tlsCertFile) and tls_key_file \(settings.tlsKeyFile)")
        }
        if !settings.credsFile.isEmpty {
            try check(natsOptions_SetUserCredentialsFromFiles(options, settings.credsFile, nil), "creds_file \(settings.credsFile)")
        }
        if !settings.userPasswordFile.isEmpty {
            let (user, password) = try userAndPassword(settings.userPasswordFile)
            try check(natsOptions_SetUserInfo(options, user, password), "user_password_file")
        }
    }

    /// Checks, before the first connection, that every file the settings name can
    /// be read and the password file has its form: a mistake there is the
    /// configuration's, not the server's, and retrying would not mend it.
    static func preflight(_ settings: PublishSettings) throws(NatsFailure) {
        let files = [("tls_ca_file", settings.tlsCAFile), ("tls_cert_file", settings.tlsCertFile), ("tls_key_file", settings.tlsKeyFile),
                     ("creds_file", settings.credsFile), ("user_password_file", settings.userPasswordFile)]
        for (key, path) in files where !path.isEmpty && !FileManager.default.isReadableFile(atPath: path) {
            throw NatsFailure(description: "publish.nats.\(key): \(path) cannot be read by this user")
        }
        if !settings.userPasswordFile.isEmpty { _ = try userAndPassword(settings.userPasswordFile) }
    }

    /// `USER:PASSWORD` on the file's first line.
    private static func userAndPassword(_ path: String) throws(NatsFailure) -> (String, String) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8),
              let line = text.split(separator: "\n", omittingEmptySubsequences: false).first,
              let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
            throw NatsFailure(description: "user_password_file \(path): cannot be read, or its first line is not USER:PASSWORD")
        }
        return (String(line[..<colon]), String(line[line.index(after: colon)...]))
    }

    /// Checks the stream exists, creating it when allowed: limits retention, file
    /// storage, every subject under the prefix, the configured duplicate window.
    /// Returns a warning when an existing stream keeps message ids for less time
    /// than the configured window (repeats after a crash are then only caught by
    /// resuming after the stream's last message).
    func ensureStream() throws(NatsFailure) -> String? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(rawValue: 0)
        var status = js_GetStreamInfo(&info, context, settings.stream, nil, &code)
        if status == NATS_OK {
            defer { jsStreamInfo_Destroy(info) }
            let window = info?.pointee.Config?.pointee.Duplicates ?? 0
            guard window < settings.duplicateWindowSeconds * 1_000_000_000 else { return nil }
            return "stream \(settings.stream) keeps message ids for \(window / 1_000_000_000) s, less than "
                + "publish.nats.duplicate_window_seconds (\(settings.duplicateWindowSeconds) s)"
        }
        guard status == NATS_NOT_FOUND || code == JSStreamNotFoundErr else { throw NatsLink.failure(status, "looking up stream \(settings.stream)", code) }
        guard settings.createStream else {
            throw NatsFailure(description: "stream \(settings.stream) does not exist (create it, or set publish.nats.create_stream)")
        }
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        let subjects = settings.subjectPrefix + ".>"
        status = settings.stream.withCString { name in
            subjects.withCString { subject in
                var list: [UnsafePointer<CChar>?] = [subject]
                return list.withUnsafeMutableBufferPointer { buffer in
                    config.Name = name
                    config.Subjects = buffer.baseAddress
                    config.SubjectsLen = 1
                    config.Retention = js_LimitsPolicy
                    config.Storage = js_FileStorage
                    config.Duplicates = settings.duplicateWindowSeconds * 1_000_000_000
                    return js_AddStream(&info, context, &config, nil, &code)
                }
            }
        }
        if status == NATS_OK { jsStreamInfo_Destroy(info) }
        try NatsLink.check(status, "creating stream \(settings.stream)", code)
        return nil
    }

    /// The stream's last message on any of this instance's subjects: its sequence
    /// and payload; nil when there is none.
    func lastMessage() throws(NatsFailure) -> (sequence: UInt64, payload: [UInt8])? {
        var last: (sequence: UInt64, payload: [UInt8])?
        for event in PublishSettings.events {
            var message: OpaquePointer?
            var code = jsErrCode(rawValue: 0)
            let status = js_GetLastMsg(&message, context, settings.stream, settings.subject(event: event), nil, &code)
            if status == NATS_NOT_FOUND || code == JSNoMessageFoundErr { continue }
            try NatsLink.check(status, "reading the last message on \(settings.subject(event: event))", code)
            defer { natsMsg_Destroy(message) }
            let sequence = natsMsg_GetSequence(message)
            guard sequence > (last?.sequence ?? 0) else { continue }
            let length = Int(natsMsg_GetDataLength(message))
            let payload = natsMsg_GetData(message).map { pointer in
                pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
            } ?? []
            last = (sequence, payload)
        }
        return last
    }

    /// Publishes one message and waits for JetStream's acknowledgement: its
    /// sequence, and whether the stream already held the message id.
    func publish(_ message: PublishPlan.Message) throws(NatsFailure) -> (sequence: UInt64, duplicate: Bool) {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = NatsLink.waitMilliseconds
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(rawValue: 0)
        let bytes = Array(message.payload.utf8)
        let status = message.messageID.withCString { id in
            settings.stream.withCString { stream in
                options.MsgId = id
                options.ExpectStream = stream
                return bytes.withUnsafeBytes { raw in
                    js_Publish(&ack, context, message.subject, raw.baseAddress, Int32(raw.count), &options, &code)
                }
            }
        }
        try NatsLink.check(status, "publishing \(message.messageID) on \(message.subject)", code)
        defer { jsPubAck_Destroy(ack) }
        guard let ack else { throw NatsFailure(description: "publishing \(message.messageID): no acknowledgement") }
        return (ack.pointee.Sequence, ack.pointee.Duplicate)
    }

    private static func check(_ status: natsStatus, _ what: String, _ code: jsErrCode = jsErrCode(rawValue: 0)) throws(NatsFailure) {
        guard status == NATS_OK else { throw failure(status, what, code) }
    }

    private static func failure(_ status: natsStatus, _ what: String, _ code: jsErrCode = jsErrCode(rawValue: 0)) -> NatsFailure {
        var text = what + ": " + String(cString: natsStatus_GetText(status))
        if let detail = nats_GetLastError(nil), detail.pointee != 0 {
            let last = String(cString: detail)
            if !text.contains(last) { text += " (" + last + ")" }
        }
        if code.rawValue != 0 { text += " [JetStream error \(code.rawValue)]" }
        return NatsFailure(description: text)
    }
}
