/// A descriptor with exactly one owner, closed exactly once: when the owner's
/// lifetime ends, unless it was handed on first with `take()`.
///
/// A `FileDescriptor` is a number that can be copied, so who closes it is a
/// convention every error path must keep. Held in one of these, it cannot be
/// forgotten on a path that throws or returns early, nor closed twice: the type
/// cannot be copied, only moved, and the compiler refuses a use after `take()`
/// or `close()`.
public struct OwnedDescriptor: ~Copyable {
    /// The descriptor, for calls while the owner lives. Never close it: the owner does.
    public let descriptor: FileDescriptor

    /// Takes ownership of `descriptor`: from now on only this owner closes it.
    public init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// Hands the descriptor on without closing it: the caller owns it now.
    public consuming func take() -> FileDescriptor {
        let descriptor = self.descriptor
        discard self
        return descriptor
    }

    /// Closes it now rather than where the owner's scope ends.
    public consuming func close() {
        descriptor.close()
        discard self
    }

    deinit {
        descriptor.close()
    }
}

/// Several descriptors with one owner (an array cannot hold non-copyable
/// values): each is closed when the owner's lifetime ends, unless they were all
/// handed on with `take()`.
public struct OwnedDescriptors: ~Copyable {
    private var descriptors: [FileDescriptor] = []

    public init() {}

    public var count: Int { descriptors.count }

    public subscript(index: Int) -> FileDescriptor { descriptors[index] }

    /// Adds `owned` to the ones this owner closes.
    public mutating func append(_ owned: consuming OwnedDescriptor) {
        descriptors.append(owned.take())
    }

    /// Hands every descriptor on without closing any: the caller owns them now.
    public consuming func take() -> [FileDescriptor] {
        let taken = descriptors
        descriptors = []
        return taken
    }

    deinit {
        for descriptor in descriptors { descriptor.close() }
    }
}
