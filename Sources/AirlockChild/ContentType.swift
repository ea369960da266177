import AirlockPolicy
import AirlockSystem
import AirlockText
import CMagic

/// Names a file's type (a MIME type such as `image/png`) from its first bytes
/// with libmagic. A decoder child makes one before it confines itself: loading
/// the database opens and maps a file, which Landlock forbids afterwards; the
/// mapping stays readable once the descriptor is closed.
public final class ContentTypeDetector {
    /// How many leading bytes of each file are judged; libmagic's own rules look
    /// no further than this for the types airlock's policy names.
    public static let headBytes = 64 * 1024

    /// libmagic's answer for bytes it has no better name for.
    public static let unknown = "application/octet-stream"

    private let cookie: OpaquePointer
    private let database: String
    /// The compiled database in memory it was loaded from; nil: from the file.
    private let bytes: UnsafeRawBufferPointer?

    /// magic_open(3) and magic_load(3) with MIME types only, no decompression and
    /// no scanning beyond `headBytes`.
    ///
    /// - Throws: `ContentTypeError` naming the database when it cannot be loaded.
    public convenience init(database: String) throws(ContentTypeError) {
        // libmagic reads the database by path: no EINTR to retry, it reports errors itself.
        try self.init(database: database, bytes: nil) { magic_load($0, database) }
    }

    /// magic_load_buffers(3) of a compiled database already in memory (`bytes`,
    /// which must outlive the detector): how a decoder template loads it into
    /// memory its children share.
    ///
    /// - Throws: `ContentTypeError` naming `database` when libmagic refuses the bytes.
    public convenience init(database: String, bytes: UnsafeRawBufferPointer) throws(ContentTypeError) {
        try self.init(database: database, bytes: bytes) { cookie in
            var buffer: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(mutating: bytes.baseAddress)
            var size = bytes.count
            return magic_load_buffers(cookie, &buffer, &size, 1)
        }
    }

    /// A cookie with airlock's flags and byte limit, loaded by `load` (0 on success).
    private init(database: String, bytes: UnsafeRawBufferPointer?, load: (OpaquePointer) -> Int32) throws(ContentTypeError) {
        guard let cookie = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR | MAGIC_NO_CHECK_COMPRESS) else {
            throw ContentTypeError(database: database, detail: "magic_open: \(Errno.current)")
        }
        var limit = ContentTypeDetector.headBytes
        _ = magic_setparam(cookie, MAGIC_PARAM_BYTES_MAX, &limit)
        guard load(cookie) == 0 else {
            let detail = magic_error(cookie).map { String(cString: $0) } ?? "\(Errno(rawValue: magic_errno(cookie)))"
            magic_close(cookie)
            throw ContentTypeError(database: database, detail: detail)
        }
        self.cookie = cookie
        self.database = database
        self.bytes = bytes
    }

    deinit { magic_close(cookie) }

    /// Another detector loaded the way this one was, for another thread (one
    /// cookie serves one thread). From the file, it opens it: before confinement.
    public func sibling() throws(ContentTypeError) -> ContentTypeDetector {
        guard let bytes else { return try ContentTypeDetector(database: database) }
        return try ContentTypeDetector(database: database, bytes: bytes)
    }

    /// magic_buffer(3) on a file's first bytes: its MIME type, lowercased, or
    /// `unknown` when libmagic gives no well-formed answer.
    public func type(of head: UnsafeRawBufferPointer) -> String {
        var empty: UInt8 = 0
        let found = head.isEmpty ? magic_buffer(cookie, &empty, 0) : magic_buffer(cookie, head.baseAddress!, head.count)
        guard let answer = found else { return ContentTypeDetector.unknown }
        let text = String(decoding: [UInt8](cString: answer), as: UTF8.self).lowercased()
        return MediaType.isWellFormed(text) ? text : ContentTypeDetector.unknown
    }

    public func type(of bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { type(of: UnsafeRawBufferPointer(rebasing: $0.prefix(ContentTypeDetector.headBytes))) }
    }
}

/// The magic database could not be loaded: not the drop's fault, so the drop waits.
public struct ContentTypeError: Error, Sendable, CustomStringConvertible {
    public let database: String
    public let detail: String
    public var description: String { "cannot load the magic database \(database): \(detail)" }
}

/// A sink that names the type of every file it passes on, from the first
/// `headBytes` bytes the scan hands it anyway: no second read of the drop.
public struct TypingSink<Inner: EntrySink>: EntrySink {
    public private(set) var inner: Inner
    private let detector: ContentTypeDetector
    /// Where files are typed when there are threads for it; nil: on this thread.
    private let threads: TypingThreads?
    private var head: [UInt8] = []
    private var name: [UInt8] = []
    /// Each file written, by raw entry name, with its detected type (nil while
    /// `threads` have it), in scan order.
    private var types: [(entry: [UInt8], type: String?)] = []

    public init(_ inner: Inner, detector: ContentTypeDetector, threads: TypingThreads? = nil) {
        self.inner = inner
        self.detector = detector
        self.threads = threads
    }

    public mutating func makeDirectory(_ path: EntryPath) throws(SystemError) { try inner.makeDirectory(path) }

    public mutating func beginFile(_ path: EntryPath, size: Int64?) throws(SystemError) {
        try inner.beginFile(path, size: size)
        head.removeAll(keepingCapacity: true)
        name = path.raw
    }

    public mutating func write(_ chunk: UnsafeRawBufferPointer) throws(SystemError) {
        try inner.write(chunk)
        let room = ContentTypeDetector.headBytes - head.count
        if room > 0 { head.append(contentsOf: chunk.prefix(room)) }
    }

    public mutating func endFile() throws(SystemError) {
        try inner.endFile()
        if let threads {
            threads.submit(types.count, head)
            types.append((name, nil))
        } else {
            types.append((name, detector.type(of: head)))
        }
    }

    public mutating func close() { inner.close() }

    /// The types as the verdict carries them: escaped entry name to type, once
    /// the typing threads, if any, have typed every file.
    public var escapedTypes: [(String, String)] {
        let typed = threads?.finish() ?? [:]
        return types.enumerated().map { index, file in
            guard let type = file.type ?? typed[index] else { preconditionFailure("file \(index) was queued for typing and never typed") }
            return (EscapedName(file.entry).text, type)
        }
    }
}

/// The decoder children's side of type detection: the argument that names the
/// database, loading it, and a scan through a typing sink.
public enum ContentTypes {
    public static let databaseArgument = "--magic-database="

    /// Takes `--magic-database=PATH` out of `arguments`; the path, if there was one.
    public static func takeDatabaseArgument(_ arguments: inout [String]) -> String? {
        guard let index = arguments.firstIndex(where: { $0.hasPrefix(databaseArgument) }) else { return nil }
        let path = String(arguments.remove(at: index).dropFirst(databaseArgument.count))
        return path
    }

    /// The detector for `database`; success(nil) when detection is off.
    public static func load(_ database: String?) -> Result<ContentTypeDetector?, ContentTypeError> {
        guard let database else { return .success(nil) }
        do {
            return .success(try ContentTypeDetector(database: database))
        } catch {
            return .failure(error)
        }
    }

    /// The verdict of a child that could not load its database: the supervisor
    /// defers the drop, for nothing about it has been judged.
    public static func unavailable(_ error: ContentTypeError) -> VerdictMessage {
        VerdictMessage(.unavailable(detail: error.description))
    }
}
