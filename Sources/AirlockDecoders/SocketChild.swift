import AirlockChild
import AirlockSystem

/// A decoder program started to be talked to rather than handed a drop at once:
/// a child waiting for its hand-over, or a decoder template. It holds nothing at
/// 0, 1 and the drop's three descriptor numbers, and its end of a socket pair at
/// the hand-over socket's number; the supervisor keeps the other end.
final class SocketChild: Sendable {
    let child: ChildProcess
    let socket: HandOverSocket

    private init(child: ChildProcess, socket: HandOverSocket) {
        self.child = child
        self.socket = socket
    }

    /// Starts `executable` with `arguments` through `spawn` (`ChildProcess.spawn`,
    /// or a call that makes it on another thread).
    static func start(_ executable: String, arguments: [String], environment: [String],
                      spawn: (String, [String], [String], [ChildDescriptor]) throws(SystemError) -> ChildProcess)
        throws(SystemError) -> SocketChild {
        let (mine, theirs) = try HandOverSocket.pair()
        // Our copy of the child's end closes when `theirs` goes, at the end of this
        // scope: the child is then its only holder, and a supervisor that dies
        // leaves it reading end-of-file.
        let child = try spawn(executable, arguments, environment,
                              [.nullInput(0), .nullOutput(1),
                               .nullInput(Confinement.dropDescriptor.rawValue), .nullInput(Confinement.stagingDescriptor.rawValue),
                               .nullInput(Confinement.resultDescriptor.rawValue),
                               .inherit(theirs.descriptor, as: WarmStart.socketDescriptor.rawValue)])
        return SocketChild(child: child, socket: mine)
    }

    /// Whether the child has exited (its pidfd polls readable then); `ifUnknown`
    /// when the poll itself fails.
    func hasExited(ifUnknown: Bool) -> Bool {
        guard let pidfd = child.descriptorNumber else { return true }
        return (try? waitReadable(FileDescriptor(rawValue: pidfd), milliseconds: 0)) ?? ifUnknown
    }

    /// Kills and reaps the child. Children it forked itself are not touched.
    func end() {
        child.signal(.kill)
        _ = try? child.wait()
        child.close()
    }
}
