#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims

/// A connected local (AF_UNIX) stream socket that the owner closes, with sends
/// that never raise SIGPIPE and receives bounded by a deadline.
public struct LocalSocket: ~Copyable {
    private let owned: OwnedDescriptor
    public var descriptor: FileDescriptor { owned.descriptor }

    /// socket(2) and connect(2) to the socket at `path`.
    ///
    /// - Throws: `SystemError` for `connect` with the path (ENOENT, ECONNREFUSED, EACCES, ENAMETOOLONG...).
    public init(connectingTo path: String) throws(SystemError) {
        let fd = airlock_connect_local(path)
        guard fd >= 0 else { throw SystemError("connect", Array(path.utf8), Errno.current) }
        owned = OwnedDescriptor(FileDescriptor(rawValue: fd))
    }

    /// send(2) of every byte, with MSG_NOSIGNAL.
    public func send(_ bytes: [UInt8]) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let n = try bytes.withUnsafeBytes { buffer in
                Result { () throws(SystemError) in
                    try retrying("send") { airlock_send(descriptor.rawValue, buffer.baseAddress! + done, buffer.count - done) }
                }
            }.get()
            done += n
        }
    }

    /// sendmsg(2) of one byte carrying `passed` as SCM_RIGHTS: the receiver gets
    /// its own descriptor for the same open file.
    public func send(passing passed: FileDescriptor) throws(SystemError) {
        var byte: UInt8 = 0
        _ = try retrying("sendmsg(SCM_RIGHTS)") { airlock_send_descriptor(descriptor.rawValue, passed.rawValue, &byte, 1) }
    }

    /// Reads until `terminator` arrives (returned without it), the peer closes, or
    /// `deadline` (CLOCK_MONOTONIC nanoseconds) passes.
    ///
    /// - Throws: `SystemError` with ETIMEDOUT past the deadline, EMSGSIZE past
    ///   `limit` bytes, ECONNRESET when the peer closes first.
    public func receive(until terminator: UInt8, limit: Int, deadline: UInt64) throws(SystemError) -> [UInt8] {
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            let now = monotonicNanoseconds()
            guard now < deadline else { throw SystemError("recv", nil, Errno(rawValue: ETIMEDOUT)) }
            let milliseconds = Int32(min((deadline - now) / 1_000_000 + 1, UInt64(Int32.max)))
            guard try waitReadable(descriptor, milliseconds: milliseconds) else { continue }
            let n = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try retrying("recv") { recv(descriptor.rawValue, buffer.baseAddress, buffer.count, 0) }
                }
            }.get()
            guard n > 0 else { throw SystemError("recv", nil, Errno(rawValue: ECONNRESET)) }
            reply += chunk[0..<n]
            if let end = reply.firstIndex(of: terminator) { return Array(reply[..<end]) }
            guard reply.count <= limit else { throw SystemError("recv", nil, Errno(rawValue: EMSGSIZE)) }
        }
    }
}
