import AirlockSystem

/// What a decoder template is sent for each drop: the arguments a freshly
/// started child gets on its command line. The drop, the staging directory, the
/// result pipe and the child's go-ahead socket travel with it as descriptors,
/// in that order.
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

    /// Whether `init(decoding:)` reads `bytes`, checked in place, with no argument
    /// built. A template checks its request so before it forks and leaves the
    /// decoding to the child: strings it built and freed after the fork would
    /// write to heap pages it still shares with that child, each write a page copied.
    public static func isWellFormed(_ bytes: [UInt8]) -> Bool {
        guard bytes.first == Self.version else { return false }
        let body = bytes.dropFirst()
        guard body.isEmpty || body.last == 0 else { return false }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = body.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
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
