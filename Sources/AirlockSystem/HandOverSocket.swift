#if canImport(Glibc)
import Glibc
#endif
import CAirlockShims

/// One end of a local socket pair that carries whole messages with descriptors
/// (SOCK_SEQPACKET, SCM_RIGHTS): how a decoder template receives each drop's
/// descriptors and returns its child's pidfd. The owner closes it; `deinit` closes what is still open.
public final class HandOverSocket: Sendable {
    private let owned: OwnedDescriptor
    public var descriptor: FileDescriptor { owned.descriptor }

    /// The most descriptors one message carries.
    public static let maxDescriptors = Int(AIRLOCK_HANDOVER_MAX_DESCRIPTORS)

    /// Takes ownership of an open socket, such as one a child inherited.
    public init(adopting descriptor: FileDescriptor) {
        owned = OwnedDescriptor(descriptor)
    }

    /// socketpair(2) of two connected SOCK_SEQPACKET ends, both close-on-exec.
    public static func pair() throws(SystemError) -> (HandOverSocket, HandOverSocket) {
        var fds: [Int32] = [-1, -1]
        _ = try retrying("socketpair") { airlock_handover_pair(&fds) }
        return (HandOverSocket(adopting: FileDescriptor(rawValue: fds[0])), HandOverSocket(adopting: FileDescriptor(rawValue: fds[1])))
    }

    /// sendmsg(2) of `bytes` as one message carrying `passing` (SCM_RIGHTS): the
    /// receiver gets its own descriptors for the same open files.
    ///
    /// - Throws: `sendmsg` with EPIPE when the peer is gone, EMSGSIZE for a message too large.
    public func send(_ bytes: [UInt8], passing: [FileDescriptor]) throws(SystemError) {
        precondition(passing.count <= Self.maxDescriptors, "more descriptors than one message carries")
        let fds = passing.map(\.rawValue)
        let sent = try bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in
                try retrying("sendmsg(SCM_RIGHTS)") {
                    airlock_handover_send(descriptor.rawValue, fds, Int32(fds.count), buffer.baseAddress, buffer.count)
                }
            }
        }.get()
        // A datagram-like socket sends the whole message or fails.
        guard sent == bytes.count else { throw SystemError("sendmsg(SCM_RIGHTS)", nil, Errno(rawValue: EMSGSIZE)) }
    }

    /// One message and the descriptors that came with it (close-on-exec): each
    /// is closed when this goes, unless taken first.
    public struct Received: ~Copyable {
        public let bytes: [UInt8]
        public var descriptors: OwnedDescriptors

        /// The descriptors alone, still owned.
        public consuming func takeDescriptors() -> OwnedDescriptors {
            descriptors
        }
    }

    /// recvmsg(2) of one message of at most `limit` bytes with its descriptors;
    /// nil when the peer closed first.
    ///
    /// - Throws: `recvmsg` with EMSGSIZE for a message or descriptor list that did
    ///   not fit (whatever descriptors did arrive are closed).
    public func receive(limit: Int) throws(SystemError) -> Received? {
        var fds = [Int32](repeating: -1, count: Self.maxDescriptors)
        var count: Int32 = 0
        var outcome: Result<Int, SystemError> = .success(0)
        // Not zero-filled first: only the pages the message lands in are written. In
        // a template every page of its heap is shared with its last child, so each
        // page written after a fork is a copy-on-write fault, and zeroing the whole
        // buffer cost sixteen of them per request for a message of one or two pages.
        let bytes = [UInt8](unsafeUninitializedCapacity: limit) { buffer, initialized in
            outcome = Result { () throws(SystemError) in
                try retrying("recvmsg(SCM_RIGHTS)") {
                    airlock_handover_receive(descriptor.rawValue, &fds, Int32(fds.count), &count, buffer.baseAddress, buffer.count)
                }
            }
            initialized = (try? outcome.get()) ?? 0
        }
        let received = try outcome.get()
        var descriptors = OwnedDescriptors()
        for fd in fds.prefix(Int(count)) { descriptors.append(OwnedDescriptor(FileDescriptor(rawValue: fd))) }
        // With nothing received, the owner closes whatever arrived.
        guard received > 0 else { return nil }
        return Received(bytes: bytes, descriptors: descriptors)
    }

    /// send(2) of one byte with MSG_NOSIGNAL.
    public func reply(_ byte: UInt8) throws(SystemError) {
        var byte = byte
        _ = try retrying("send") { airlock_send(descriptor.rawValue, &byte, 1) }
    }
}

extension FileDescriptor {
    /// dup2(2) of this descriptor onto `target`, which is closed first if open;
    /// the copy is inherited across exec. `target` must differ from this one.
    public func duplicate(onto target: FileDescriptor) throws(SystemError) {
        precondition(target != self, "dup2 onto itself would leave the descriptor close-on-exec")
        _ = try retrying("dup2") { dup2(rawValue, target.rawValue) }
    }
}
