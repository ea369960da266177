import CAirlockShims

/// The capability sets of the calling process (capabilities(7)), each a mask
/// with bit N set for capability N.
public struct Capabilities: Sendable, Equatable {
    /// The two the service is granted: read leases on producers' files, and
    /// reading every file a producer can create whatever its mode.
    public static let lease = 28                // CAP_LEASE
    public static let dacReadSearch = 2         // CAP_DAC_READ_SEARCH

    public var effective: UInt64
    public var permitted: UInt64
    public var inheritable: UInt64
    public var ambient: UInt64
    public var bounding: UInt64

    /// capget(2) and prctl(PR_CAP_AMBIENT_IS_SET, PR_CAPBSET_READ) for this process.
    public static func current() throws(SystemError) -> Capabilities {
        var sets = Capabilities(effective: 0, permitted: 0, inheritable: 0, ambient: 0, bounding: 0)
        _ = try retrying("capget") {
            airlock_capabilities(&sets.effective, &sets.permitted, &sets.inheritable, &sets.ambient, &sets.bounding)
        }
        return sets
    }

    /// Whether this process holds no capability and can pass none on, from one
    /// capget(2): its effective, permitted and inheritable sets are empty, and so
    /// then is its ambient set, which the kernel keeps within both the permitted
    /// and the inheritable sets (capabilities(7)). The bounding set is not read.
    public static func noneHeld() throws(SystemError) -> Bool {
        var effective: UInt64 = 0, permitted: UInt64 = 0, inheritable: UInt64 = 0
        _ = try retrying("capget") { airlock_capability_sets(&effective, &permitted, &inheritable) }
        return effective == 0 && permitted == 0 && inheritable == 0
    }

    /// Whether `capability` is in the effective set: the process acts with it now.
    public func holds(_ capability: Int) -> Bool {
        effective & (1 << UInt64(capability)) != 0
    }

    /// Whether nothing is held, nothing can be passed on and nothing raised.
    public var isEmpty: Bool { effective == 0 && permitted == 0 && inheritable == 0 && ambient == 0 }

    /// Clears the ambient and inheritable sets (prctl PR_CAP_AMBIENT_CLEAR_ALL,
    /// capset), keeping what this process holds: no program it executes from
    /// now on starts with a capability.
    public static func stopPassingOn() throws(SystemError) {
        _ = try retrying("capset") { airlock_clear_inherited_capabilities() }
    }

    /// Gives up every capability: ambient, bounding (as far as CAP_SETPCAP
    /// allows; returns how many stay there), effective, permitted, inheritable.
    /// Throws unless the four sets are empty afterwards.
    @discardableResult
    public static func dropAll() throws(SystemError) -> Int {
        var left: Int32 = 0
        _ = try retrying("capset") { airlock_drop_all_capabilities(&left) }
        guard try current().isEmpty else { throw SystemError("capset", nil, .notPermitted) }
        return Int(left)
    }
}
