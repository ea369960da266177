import Synchronization

/// A descriptor with exactly one owner, closed exactly once: when the owner's
/// lifetime ends, unless it was handed on first with `take()`.
///
/// A `FileDescriptor` is a number that can be copied, so who closes it is a
/// convention every error path must keep. Held in one of these, it cannot be
/// forgotten on a path that throws or returns early, nor closed twice: the type
/// cannot be copied, only moved, and the compiler refuses a use after `take()`
/// or `close()`.
///
/// The rule: `FileDescriptor` stays a copyable, borrowed handle, the view every
/// system-call wrapper takes, and never decides when a descriptor closes. An
/// owner does: this type for a scope or a field, `SharedDescriptor` for a field
/// of a copyable value, `OwnedDescriptors` for several, `SharedDescriptors` for
/// several behind a copyable value (a root's directories). Nothing else calls
/// close, apart from `FileDescriptor`'s own `close()` and `closeAfter` (the
/// primitive these are built on); where a descriptor must close before its
/// owner's scope ends (a forked child before exec, an end closed to signal EOF
/// to a peer), that is the owner's consuming `close()`. Making `FileDescriptor`
/// itself non-copyable would make every borrowed use a `borrowing` parameter in
/// every file, for no descriptor more closed than the owners already close.
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

/// A descriptor number may cross threads; the owner that closes it stays one.
extension OwnedDescriptor: Sendable {}

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

/// An owner for where a value must be copyable (a field of a copyable struct, a
/// dictionary's value): held by reference, its descriptor closed once, at
/// `close()` or when the last reference goes, whichever comes first, from
/// whichever thread.
public final class SharedDescriptor: Sendable {
    /// The descriptor, for calls while it is open. Never close it: the owner does.
    public let descriptor: FileDescriptor
    private let isOpen = Atomic<Bool>(true)

    /// Takes ownership of `owned`: from now on only this owner closes it.
    public init(_ owned: consuming OwnedDescriptor) {
        descriptor = owned.take()
    }

    /// Closes it now; a second call does nothing.
    public func close() {
        guard isOpen.exchange(false, ordering: .acquiringAndReleasing) else { return }
        descriptor.close()
    }

    deinit {
        close()
    }
}

/// Several descriptors with one owner where a value must be copyable (a layout of
/// directories copied into every part of a program): held by reference, each
/// closed once, when the last reference goes. There is no early close: a copy
/// somewhere may still use them, so only the last one lets them go.
public final class SharedDescriptors: Sendable {
    /// The descriptors, in the order they were appended. Never close one: the owner does.
    public let descriptors: [FileDescriptor]

    /// Takes ownership of every descriptor `owned` holds.
    public init(_ owned: consuming OwnedDescriptors) {
        descriptors = owned.take()
    }

    deinit {
        for descriptor in descriptors { descriptor.close() }
    }
}
