import AirlockSystem

/// What a decoder child started ahead of need is told when a drop is handed to
/// it: the arguments a freshly started child gets on its command line. The
/// drop, the staging directory and the result pipe travel with it as
/// descriptors, in that order.
///
/// Encoded as a version byte, then each argument's UTF-8 bytes followed by NUL.
public struct HandOverMessage: Sendable, Equatable {
    public static let version: UInt8 = 1
    /// Larger than any argument list the supervisor builds; a message past it is refused.
    public static let maxBytes = 64 * 1024

    public var arguments: [String]

    public init(arguments: [String]) {
        self.arguments = arguments
    }

    public var encoded: [UInt8] {
        var bytes = [Self.version]
        for argument in arguments {
            let utf8 = Array(argument.utf8)
            precondition(!utf8.contains(0), "an argument holds no NUL, as no command line can")
            bytes += utf8 + [0]
        }
        return bytes
    }

    /// nil for another version, a last argument without its NUL, or bytes that are not UTF-8.
    public init?(decoding bytes: [UInt8]) {
        guard bytes.first == Self.version else { return nil }
        let body = bytes.dropFirst()
        guard body.isEmpty || body.last == 0 else { return nil }
        var arguments: [String] = []
        var start = body.startIndex
        for index in body.indices where body[index] == 0 {
            guard let argument = String(validating: body[start..<index], as: UTF8.self) else { return nil }
            arguments.append(argument)
            start = index + 1
        }
        self.arguments = arguments
    }
}

/// The start of a decoder child's life when it was started ahead of need: it
/// ties its life to the supervisor's, then waits on its hand-over socket for one
/// drop. Nothing of a drop is read here; confinement follows in the child's
/// main path exactly as for a child started with its drop.
public enum WarmStart {
    /// The only argument of a child started ahead of need.
    public static let flag = "--await-hand-over"
    /// The hand-over socket; 3, 4 and 5 hold /dev/null until the drop's descriptors replace them.
    public static let socketDescriptor = FileDescriptor(rawValue: 6)
    /// The child's reply once its descriptors are in place.
    public static let acknowledgement: UInt8 = 0x06
    /// The exit status of a child whose hand-over never came or could not be taken.
    public static let unusedStatus: Int32 = 75

    public struct Start: Sendable {
        /// The arguments to run with.
        public var arguments: [String]
        /// CPU seconds spent before the drop was handed over, which the CPU limit
        /// adds to its allowance: the limit counts from the hand-over.
        public var cpuSecondsSpent: Int64
    }

    /// The child's arguments: its command line, or for a child started with
    /// `flag` those handed over with its drop, once the drop, staging and result
    /// descriptors are in place at 3, 4 and 5. nil: no hand-over (the supervisor
    /// closed the socket, or the message was malformed); the child must exit.
    /// `beforeWaiting` runs once the child is tied to the supervisor, before it
    /// waits: the archive decoder's debug build spends CPU time there, so that
    /// its tests can tell from when the CPU limit counts.
    public static func start(_ commandLine: [String], beforeWaiting: () -> Void = {}) -> Start? {
        guard commandLine == [flag] else { return Start(arguments: commandLine, cpuSecondsSpent: 0) }
        // Before waiting: a supervisor that dies now takes this child with it, and
        // one already gone leaves it nothing to wait for.
        do { try Confinement.tieToSupervisor() } catch { return nil }
        beforeWaiting()
        let socket = HandOverSocket(adopting: socketDescriptor)
        guard let received = try? socket.receive(limit: HandOverMessage.maxBytes) else { return nil }
        defer { received.descriptors.forEach { $0.close() } }
        let targets = [Confinement.dropDescriptor, Confinement.stagingDescriptor, Confinement.resultDescriptor]
        guard received.descriptors.count == targets.count, let message = HandOverMessage(decoding: received.bytes) else { return nil }
        do {
            for (descriptor, target) in zip(received.descriptors, targets) { try descriptor.duplicate(onto: target) }
            try socket.reply(acknowledgement)
        } catch {
            return nil
        }
        return Start(arguments: message.arguments, cpuSecondsSpent: CurrentProcess.cpuSecondsSpent())
    }
}
