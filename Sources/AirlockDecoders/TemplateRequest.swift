import AirlockChild
import AirlockSystem

/// One drop's request to a decoder template, from the supervisor's side: the
/// drop's arguments and descriptors go out with a go-ahead socket for the
/// child; the child's pidfd and pid come back; the child is given its go-ahead
/// once it is held here by its pidfd.
///
/// Whatever goes wrong returns nil, and the go-ahead socket closes unsent: a
/// child the template forked but could not report reads end-of-file there and
/// exits before it touches the drop, so the drop's next child is the only one
/// that decodes it.
struct TemplateRequest {
    let socket: HandOverSocket
    /// CLOCK_MONOTONIC nanoseconds by which the reply must have come.
    let deadline: UInt64
    /// Kills the template: the `template-dies` start fault of debug builds' tests.
    var templateFault: (() -> Void)? = nil

    /// The forked child, running with `arguments` and `descriptors` once this returns; nil on any failure.
    func fork(arguments: [String], descriptors: [FileDescriptor]) -> ChildProcess? {
        guard let (go, childGo) = try? HandOverSocket.pair() else { return nil }
        do {
            try socket.send(HandOverMessage(arguments: arguments).encoded, passing: descriptors + [childGo.descriptor])
        } catch {
            return nil
        }
        // The child holds the only other copy of its end from now on.
        withExtendedLifetime(childGo) {}
        if StartFault.templateDies.fails() { templateFault?() }
        guard let child = receiveChild() else { return nil }
        if StartFault.goAheadLost.fails() { return child }
        do {
            try go.reply(DecoderTemplate.goAhead)
        } catch {
            // No go-ahead can reach it: it is ended here, and the drop's child is
            // started another way. (One whose go-ahead is lost in any other way
            // never says it took the drop, and the drop is deferred, not judged.)
            child.signal(.kill)
            _ = try? child.wait()
            child.close()
            return nil
        }
        return child
    }

    /// The template's reply: the child by its pidfd; nil past the deadline, at
    /// end-of-file, or for anything but one pidfd and a pid.
    private func receiveChild() -> ChildProcess? {
        while true {
            let now = monotonicNanoseconds()
            guard now < deadline else { return nil }
            let milliseconds = Int32(min((deadline - now) / 1_000_000 + 1, 1000))
            guard let readable = try? waitReadable(socket.descriptor, milliseconds: milliseconds) else { return nil }
            if readable { break }
        }
        guard let reply = try? socket.receive(limit: 16) else { return nil }
        guard reply.descriptors.count == 1, reply.bytes.count == 5, reply.bytes[0] == DecoderTemplate.replyVersion else {
            reply.descriptors.forEach { $0.close() }
            return nil
        }
        var pid: Int32 = 0
        withUnsafeMutableBytes(of: &pid) { $0.copyBytes(from: reply.bytes[1..<5]) }
        return ChildProcess.adopting(pidfd: reply.descriptors[0], pid: Int32(littleEndian: pid))
    }
}
